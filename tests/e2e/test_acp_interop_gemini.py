"""The real ``gemini --acp`` (0.61.0, scripted model, isolated home) behind gemwire's
``/acp``, driven through the seven steps (tests/acp_interop.py) by ACP clients we did not
write, over WebSocket and Streamable HTTP: the TypeScript SDK 2.4.0's
(clis/acp-sdk-ts-2.4.0/client.mjs) and the Python SDK 1.0.0rc3's
(tests/integration/acp/python_sdk_peer.py in .venv-acp-rc3). One endpoint serves every
client; each connection is a gemini process of its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kit.served import serve_asgi
from starlette.routing import Route, Router, WebSocketRoute

from gemwire.runners.acp import AgentChannel, AgentLaunch, ProcessChannel
from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import (
    Fail,
    FunctionCall,
    Hang,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
TS_SDK = ROOT / "clis" / "acp-sdk-ts-2.4.0"
RC3 = ROOT / ".venv-acp-rc3" / "bin" / "python"
PEER = ROOT / "tests" / "integration" / "acp" / "python_sdk_peer.py"
CLIENTS: dict[str, tuple[list[str], Path]] = {
    "ts-2.4.0": (["node", "--experimental-websocket", "client.mjs"], TS_SDK),
    "python-1.0.0rc3": ([str(RC3), str(PEER), "client"], ROOT),
}
MISSING = {
    "ts-2.4.0": shutil.which("node") is None or not (TS_SDK / "node_modules").is_dir(),
    "python-1.0.0rc3": not RC3.exists(),
}
RUNS = [
    pytest.param(
        client,
        scheme,
        marks=pytest.mark.skipif(MISSING[client], reason="make agents installs it"),
    )
    for client in CLIENTS
    for scheme in ("ws", "http")
]


def _turns(n: int) -> list[Reply | Fail]:
    write = FunctionCall("write_file", {"file_path": f"w{n}.txt", "content": "a\n"})
    return [
        Reply([Text("Hello there.")]),
        Reply([Text("Writing."), write]),
        Reply([Text("Written.")]),
        Reply([Text("Thinking"), Hang()]),
        Reply([Text("Again.")]),
    ]


@pytest.fixture(scope="module")
def gemini_acp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, IsolatedGemini]]:
    turns = [turn for n in range(len(RUNS)) for turn in _turns(n)]  # each run takes its own
    with ScriptedModel(Scenario(turns=turns)) as model:
        env = IsolatedGemini(model.url, root=tmp_path_factory.mktemp("gemini"))

        def launch(name: str) -> AgentChannel:
            # Gemini CLI 0.61.0 cannot load a session in its first minute (the file a load
            # creates is the session's own, reset: tests/e2e/test_acp_gemini.py); each
            # connection starts its agent here, so the sessions before it are made older.
            for file in env.session_files():
                if not file.name.startswith("session-2020"):
                    older = f"session-2020-01-01T00-00-{file.stem.rsplit('-', 1)[-1]}.jsonl"
                    file.rename(file.with_name(older))
            command = (*pinned_gemini_command(), "--acp")
            launch = AgentLaunch(
                command=command, cwd=str(env.workspace), env=env.environ(), inherit_env=False
            )
            return ProcessChannel(launch)

        endpoint = AcpEndpoint(launch, roots=(str(env.workspace),))
        app = Router(
            routes=[Route("/acp", endpoint), WebSocketRoute("/acp", endpoint)],
            lifespan=lambda app: endpoint.running(),
        )
        with serve_asgi(app) as host:
            yield host, env
        assert env.live_processes() == []


def _run(client: str, url: str, cwd: str) -> list[dict[str, Any]]:
    command, folder = CLIENTS[client]
    done = subprocess.run(
        [*command, url, *([url.partition(":")[0]] if client.startswith("ts") else []), cwd],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
        check=False,
    )
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, (steps, done.stderr[-3000:])
    return steps


@pytest.mark.parametrize(("client", "scheme"), RUNS)
def test_sdk_clients_run_the_seven_steps_against_gemini(
    gemini_acp: tuple[str, IsolatedGemini], client: str, scheme: str
) -> None:
    host, env = gemini_acp
    steps = _run(client, f"{scheme}://{host}/acp?agent=gemini", str(env.workspace))
    by_step = {step.pop("step"): step for step in steps}
    assert list(by_step) == [
        "initialize", "session/new", "prompt", "permission", "cancel", "session/load",
        "prompt after load",
    ]  # fmt: skip
    assert by_step["initialize"] == {
        "protocolVersion": 1, "loadSession": True, "updates": [], "asked": [],
    }  # fmt: skip
    stops = [by_step[name].get("stopReason") for name in ("prompt", "permission", "cancel")]
    assert stops == ["end_turn", "end_turn", "cancelled"]
    assert [_said(by_step[name]) for name in ("prompt", "permission", "cancel")] == [
        "Hello there.", "Writing.Written.", "Thinking",
    ]  # fmt: skip
    assert len(by_step["permission"]["asked"]) == 1
    # Gemini CLI answers session/load, then replays the session: the replay ends in the
    # next step (where, between the two, is the race of two processes).
    after = by_step["prompt after load"]
    assert after["stopReason"] == "end_turn"
    chunks = [
        (kind, text)
        for kind, text in by_step["session/load"]["updates"] + after["updates"]
        if kind.endswith("message_chunk")
    ]
    assert chunks[0][0] == "user_message_chunk"
    assert chunks[0][1].startswith("<session_context>")
    assert chunks[1:] == [
        ("user_message_chunk", "hello"),
        ("agent_message_chunk", "Hello there."),
        ("user_message_chunk", "permission"),
        ("agent_message_chunk", "Writing.[Function Call: write_file]"),
        ("user_message_chunk", "[Function Response: write_file]"),
        ("agent_message_chunk", "Written."),
        ("agent_message_chunk", "Again."),
    ]


def _said(step: dict[str, Any]) -> str:
    return "".join(text for kind, text in step["updates"] if kind == "agent_message_chunk")
