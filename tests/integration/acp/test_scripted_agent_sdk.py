"""``python -m gemwire.testing agent SCENARIO`` driven by the ACP Python SDK's own client (an
implementation we did not write, pinned in requirements-dev.txt), which validates every
message against its schema models: the scripted agent is an ACP agent for any client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("acp")

from acp import spawn_agent_process, text_block
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

pytestmark = pytest.mark.anyio

SCENARIO = {
    "agentInfo": {"name": "scripted-demo", "version": "0.1"},
    "turns": [
        {
            "steps": [
                {"type": "think", "text": "A file, then a command."},
                {
                    "type": "update",
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "w1",
                        "title": "Write notes.txt",
                        "kind": "edit",
                        "status": "pending",
                    },
                },
                {
                    "type": "request_permission",
                    "toolCall": {"toolCallId": "w1"},
                    "options": [
                        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                    ],
                    "then": {
                        "yes": [
                            {"type": "write_text_file", "path": "notes.txt", "content": "hi\n"},
                            {"type": "read_text_file", "path": "notes.txt", "line": 1},
                        ]
                    },
                },
                {"type": "run_command", "command": "echo", "args": ["hi"]},
                {
                    "type": "update",
                    "update": {"sessionUpdate": "usage_update", "used": 10, "size": 100},
                },
                {"type": "say", "text": "Done."},
            ],
            "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1},
        },
        {"steps": [{"type": "say", "text": "Working"}, {"type": "await_cancel"}]},
    ],
}


class Recording(Client):
    """An SDK client that allows, keeps a file system in a dict, runs no command, and
    writes down every call the agent made of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.files: dict[str, str] = {}
        self.working = anyio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.calls.append((update.session_update, update.model_dump(exclude_none=True)))
        if getattr(getattr(update, "content", None), "text", None) == "Working":
            self.working.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.calls.append(("request_permission", [o.option_id for o in options]))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id="yes", outcome="selected")
        )

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.calls.append(("write_text_file", path))
        self.files[path] = content
        return WriteTextFileResponse()

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.calls.append(("read_text_file", (path, line)))
        return ReadTextFileResponse(content=self.files[path])

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        self.calls.append(("create_terminal", [command, *(args or [])]))
        return CreateTerminalResponse(terminal_id="t1")

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("wait_for_terminal_exit", terminal_id))
        return WaitForTerminalExitResponse(exit_code=0)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("terminal_output", terminal_id))
        return TerminalOutputResponse(output="hi\n", truncated=False)

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("release_terminal", terminal_id))
        return ReleaseTerminalResponse()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the SDK runs on asyncio alone
async def test_the_sdks_client_plays_a_scenario_through_the_agent_program(tmp_path: Path) -> None:
    scenario = tmp_path / "agent.json"
    scenario.write_text(json.dumps(SCENARIO))
    client = Recording()  # type: ignore[abstract]  # the SDK Protocol; unused methods
    command = (sys.executable, "-m", "gemwire.testing", "agent", str(scenario))
    capabilities = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )
    with anyio.fail_after(60):
        async with spawn_agent_process(client, *command, cwd=tmp_path) as (connection, process):
            init = await connection.initialize(protocol_version=1, client_capabilities=capabilities)
            session = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            first = await connection.prompt(
                session_id=session.session_id, prompt=[text_block("go")]
            )
            first_calls, client.calls = client.calls, []

            async with anyio.create_task_group() as tg:

                async def cancel_once_working() -> None:
                    await client.working.wait()
                    await connection.cancel(session_id=session.session_id)

                tg.start_soon(cancel_once_working)
                second = await connection.prompt(
                    session_id=session.session_id, prompt=[text_block("go on")]
                )
        assert await process.wait() == 0  # stdin closed: it ended, with no problem
    assert init.agent_info is not None
    assert (init.agent_info.name, init.agent_info.version) == ("scripted-demo", "0.1")
    assert session.session_id == "s0"
    notes = str(tmp_path / "notes.txt")
    assert first_calls == [
        (
            "agent_thought_chunk",
            {
                "content": {"text": "A file, then a command.", "type": "text"},
                "session_update": "agent_thought_chunk",
            },
        ),
        (
            "tool_call",
            {
                "kind": "edit",
                "status": "pending",
                "title": "Write notes.txt",
                "tool_call_id": "w1",
                "session_update": "tool_call",
            },
        ),
        ("request_permission", ["yes", "no"]),
        ("write_text_file", notes),
        ("read_text_file", (notes, 1)),
        ("create_terminal", ["echo", "hi"]),
        ("wait_for_terminal_exit", "t1"),
        ("terminal_output", "t1"),
        ("release_terminal", "t1"),
        ("usage_update", {"used": 10, "size": 100, "session_update": "usage_update"}),
        (
            "agent_message_chunk",
            {"content": {"text": "Done.", "type": "text"}, "session_update": "agent_message_chunk"},
        ),
    ]
    assert client.files == {notes: "hi\n"}
    assert first.stop_reason == "end_turn"
    assert first.usage is not None
    assert (first.usage.total_tokens, first.usage.input_tokens, first.usage.output_tokens) == (
        3,
        2,
        1,
    )
    assert [kind for kind, _ in client.calls] == ["agent_message_chunk"]
    assert second.stop_reason == "cancelled"
