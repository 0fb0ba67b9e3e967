"""ACP wire types: the exact upstream names, and every frame a real agent exchanged with
gemwire decoded into its type and encoded back, field for field: every recording, of every
release (tests/fixtures/acp/<agent>/<case>.frames and acp/<agent>/<version>/<case>.frames,
recorded by ``make record-agents``; tests/fixtures/acp-1.24/, the ACP 1.24 updates)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kit.corpus import AGENT_GOLDEN, FIXTURES
from msgspec import inspect

from gemwire.protocol._strict import unknown_fields
from gemwire.runners.agents import AGENTS
from gemwire.wire import acp
from gemwire.wire.acp._base import AcpStruct
from gemwire.wire.jsonrpc import ErrorObject

FRAMES = sorted([*AGENT_GOLDEN.rglob("*.frames"), *(FIXTURES / "acp-1.24").rglob("*.frames")])


def recording(path: Path) -> str:
    """``path`` as its folders name it: ``codex/shell``, ``claude/0.101.0/write``,
    ``acp-1.24/codex-acp-2.6.0-answer``."""
    return (
        path.relative_to(AGENT_GOLDEN if path.is_relative_to(AGENT_GOLDEN) else FIXTURES)
        .with_suffix("")
        .as_posix()
    )


def release(path: Path) -> str:
    """The agent and release ``path`` was recorded from, as the unknown fields list them:
    ``codex`` (the older pin, in the agent's folder), ``codex/2.6.0``, ``acp-1.24``."""
    return recording(path).rpartition("/")[0]


INDEX = re.compile(r"\[\d+\]")

PARAMS: dict[str, type[msgspec.Struct]] = {
    # client -> agent
    "initialize": acp.InitializeRequest,
    "authenticate": acp.AuthenticateRequest,
    "session/new": acp.NewSessionRequest,
    "session/load": acp.LoadSessionRequest,
    "session/list": acp.ListSessionsRequest,
    "session/prompt": acp.PromptRequest,
    "session/cancel": acp.CancelNotification,
    "session/set_mode": acp.SetSessionModeRequest,
    "session/set_model": acp.SetSessionModelRequest,
    "session/set_config_option": acp.SetSessionConfigOptionRequest,
    # agent -> client
    "session/update": acp.SessionNotification,
    "session/request_permission": acp.RequestPermissionRequest,
    "fs/read_text_file": acp.ReadTextFileRequest,
    "fs/write_text_file": acp.WriteTextFileRequest,
    "terminal/create": acp.CreateTerminalRequest,
    "terminal/output": acp.TerminalOutputRequest,
    "terminal/wait_for_exit": acp.WaitForTerminalExitRequest,
    "terminal/kill": acp.KillTerminalRequest,
    "terminal/release": acp.ReleaseTerminalRequest,
    **acp.EXTENSION_NOTIFICATIONS,  # today's agents' _auth/status_update
}
"""The params type of each method, both ways."""


class SetSessionConfigOptionResponse(AcpStruct, frozen=True, kw_only=True):
    """The schema's, which the client reads as JSON (`AcpSession.set_config_option`): every
    option, with its current value (claude-agent-acp 0.101, codex-acp 2.6)."""

    config_options: list[dict[str, Any]]


RESULTS: dict[str, type[msgspec.Struct]] = {
    "initialize": acp.InitializeResponse,
    "session/new": acp.NewSessionResponse,
    "session/load": acp.LoadSessionResponse,
    "session/list": acp.ListSessionsResponse,
    "session/prompt": acp.PromptResponse,
    "session/request_permission": acp.RequestPermissionResponse,
    "fs/read_text_file": acp.ReadTextFileResponse,
    "terminal/create": acp.CreateTerminalResponse,
    "terminal/output": acp.TerminalOutputResponse,
    "terminal/wait_for_exit": acp.WaitForTerminalExitResponse,
    "session/set_config_option": SetSessionConfigOptionResponse,
}
"""The result type of each method that answers with more than ``null`` or ``{}``."""


UNSERVED = {"craft/drainMidTurnQueue"}
"""What recorded agents ask of the client outside ACP, answered "Method not found"
(Qwen Code's queue of prompts typed during a turn)."""


def typed_parts(path: Path) -> list[tuple[str, Any, Any]]:
    """(where, JSON value, its wire type) of every typed part of every frame in ``path``:
    params, results, errors, and each ``session/update``'s update."""
    pending: dict[tuple[str, object], str] = {}  # (who asked, id) -> method
    parts: list[tuple[str, Any, Any]] = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        sender, frame = line[:2], json.loads(line[2:])
        where = f"{recording(path)}:{number}"
        if "method" in frame:
            method = frame["method"]
            if "id" in frame:
                pending[(sender, frame["id"])] = method
            if method not in PARAMS:
                assert method in UNSERVED, f"{where}: {method} has no wire type"
                continue
            parts.append((f"{where} {method}", frame.get("params"), PARAMS[method]))
            if method == "session/update":
                update = frame["params"]["update"]
                kind = update["sessionUpdate"]
                typ = acp.SESSION_UPDATE_TYPES[kind]
                body = {k: v for k, v in update.items() if k != "sessionUpdate"}
                parts.append((f"{where} {kind}", body, typ))
            continue
        asker = "> " if sender == "< " else "< "
        method = pending.pop((asker, frame["id"]))
        if "error" in frame:
            parts.append((f"{where} {method} error", frame["error"], ErrorObject))
        elif method in RESULTS:
            parts.append((f"{where} {method} result", frame["result"], RESULTS[method]))
        else:
            assert method not in UNSERVED, f"{where}: {method} was served"
            assert frame["result"] in (None, {}), where
    assert pending == {}, f"{path}: unanswered {pending}"
    return parts


def default_of(field: inspect.Field) -> Any:
    if field.default_factory is not msgspec.NODEFAULT:
        return msgspec.to_builtins(field.default_factory())
    return msgspec.to_builtins(field.default)


def assert_same(sent: Any, again: Any, info: inspect.Type, where: str) -> None:
    """``again`` (encoded from the decoded ``sent``) holds every declared field of ``sent``
    with its value; a field left out must have held its default (``omit_defaults``)."""
    if isinstance(info, inspect.UnionType):
        options = [t for t in info.types if _fits(sent, t)]
        assert options, f"{where}: {sent!r} fits no option"
        info = options[0]
    if isinstance(info, inspect.StructType) and isinstance(sent, dict):
        fields = {f.encode_name: f for f in info.fields}
        for key, value in sent.items():
            field = fields.get(key)
            if field is None:
                continue  # unknown: reported apart
            if key in again:
                assert_same(value, again[key], field.type, f"{where}.{key}")
            else:
                assert value == default_of(field), f"{where}.{key} was dropped"
        for key in again.keys() - sent.keys() - {info.tag_field}:
            assert again[key] == default_of(fields[key]), f"{where}.{key} was added"
    elif isinstance(info, inspect.ListType) and isinstance(sent, list):
        assert len(again) == len(sent), where
        for index, (one, other) in enumerate(zip(sent, again, strict=True)):
            assert_same(one, other, info.item_type, f"{where}[{index}]")
    elif isinstance(info, inspect.DictType) and isinstance(sent, dict):
        assert again.keys() == sent.keys(), where
        for key, value in sent.items():
            assert_same(value, again[key], info.value_type, f"{where}.{key}")
    else:  # a scalar, or Raw (encoded as it came)
        assert again == sent, f"{where}: {sent!r} came back as {again!r}"


def _fits(value: Any, info: inspect.Type) -> bool:
    if isinstance(info, inspect.StructType):
        if not isinstance(value, dict):
            return False
        return info.tag_field is None or value.get(info.tag_field) == info.tag
    if isinstance(info, inspect.NoneType):
        return value is None
    if isinstance(info, inspect.ListType):
        return isinstance(value, list)
    if isinstance(info, inspect.DictType):
        return isinstance(value, dict)
    return value is not None and not isinstance(value, dict | list)


@pytest.mark.parametrize("path", FRAMES, ids=recording)
def test_every_recorded_frame_round_trips_field_for_field(path: Path) -> None:
    parts = typed_parts(path)
    assert parts
    for where, value, typ in parts:
        decoded = msgspec.json.decode(json.dumps(value), type=typ)
        again = json.loads(msgspec.json.encode(decoded))
        assert_same(value, again, inspect.type_info(typ), where)


def test_the_fields_the_wire_types_leave_out() -> None:
    """What the recorded agents send that the wire types do not declare, listed so that a
    new upstream field shows up here (the client needs none of these)."""
    unknown = {
        f"{release(path)}: {typ.__name__}{INDEX.sub('[]', field.removeprefix('$'))}"
        for path in FRAMES
        for _, value, typ in typed_parts(path)
        for field in unknown_fields(value, typ)
    }
    today = {"claude/0.101.0", "codex/2.6.0", "acp-1.24"}
    assert unknown == {
        # codex-acp 0.16.0 speaks a newer schema: env-var auth methods.
        "codex: InitializeResponse.agentCapabilities.mcpCapabilities.acp",
        "codex: InitializeResponse.authMethods[].vars",
        # In the 1.24.1 schema, for what the client does not use: the unstable providers
        # methods (providers/list, set, disable), and MCP over ACP.
        *(f"{release}: InitializeResponse.agentCapabilities.providers" for release in today),
        "codex/2.6.0: InitializeResponse.agentCapabilities.mcpCapabilities.acp",
        "acp-1.24: InitializeResponse.agentCapabilities.mcpCapabilities.acp",
        # Not among SessionCapabilities' fields in 1.24.1: the adapters' own (a session's
        # system prompt; codex-acp's title and subagents).
        *(
            f"{release}: InitializeResponse.agentCapabilities.sessionCapabilities.systemPrompt"
            for release in today
        ),
        *(
            f"{release}: InitializeResponse.agentCapabilities.sessionCapabilities.{field}"
            for release in ("codex/2.6.0", "acp-1.24")
            for field in ("title", "subagents")
        ),
    }


def test_every_agent_and_release_is_recorded() -> None:
    assert {recording(p).split("/")[0] for p in FRAMES} == {*AGENTS, "acp-1.24"}
    assert {release(p) for p in FRAMES if release(p).count("/")} == {
        "claude/0.101.0",
        "codex/2.6.0",
    }


def test_the_client_sends_exact_wire_names() -> None:
    request = acp.NewSessionRequest(
        cwd="/w",
        mcp_servers=[acp.McpServerStdio(name="fs", command="mcp-fs", args=["-v"])],
        additional_directories=["/x"],
    )
    assert json.loads(msgspec.json.encode(request)) == {
        "cwd": "/w",
        "mcpServers": [{"name": "fs", "command": "mcp-fs", "args": ["-v"], "env": []}],
        "additionalDirectories": ["/x"],
    }
    prompt = acp.PromptRequest(
        session_id="s",
        prompt=[
            acp.TextContent(text="look"),
            acp.ResourceLink(name="a.py", uri="file:///w/a.py"),
            acp.EmbeddedResource(resource=acp.ResourceContents(uri="file:///n", text="note")),
            acp.ImageContent(data="AAAA", mime_type="image/png"),
        ],
    )
    assert json.loads(msgspec.json.encode(prompt))["prompt"] == [
        {"type": "text", "text": "look"},
        {"type": "resource_link", "name": "a.py", "uri": "file:///w/a.py"},
        {"type": "resource", "resource": {"uri": "file:///n", "text": "note"}},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    ]
