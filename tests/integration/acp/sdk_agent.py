"""A second, independent ACP agent: built on the official ACP Python SDK (PyPI
``agent-client-protocol``, pinned in requirements-dev.txt), so its wire comes from the
SDK's own schema models and connection, not from gemwire.

On a prompt it thinks, plans, announces an edit tool call, asks permission, writes the
file through the client's ``fs/write_text_file`` when allowed, reports the result with a
diff, runs ``echo`` in a client terminal when the client offers terminals, changes its
mode, and answers with usage.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    text_block,
    update_agent_message,
)
from acp.helpers import (
    plan_entry,
    start_edit_tool_call,
    tool_content,
    tool_diff_content,
    update_agent_thought_text,
    update_current_mode,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    PermissionOption,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    ToolCallUpdate,
    Usage,
)


class SdkAgent:
    """Implements the SDK's ``Agent`` protocol (the methods a prompt needs)."""

    _conn: Client

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="sdk-agent", title="SDK agent", version="1.2.3"),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any], **kwargs: Any
    ) -> NewSessionResponse:
        self._cwd = cwd
        # Modes as a real agent names them: gemwire does not know which asks, so it runs
        # the agent only in a mode chosen for it (or with everything allowed).
        modes = SessionModeState(
            current_mode_id="ask", available_modes=[SessionMode(id="ask", name="Ask")]
        )
        return NewSessionResponse(session_id="sdk-session-1", modes=modes)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        return SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        conn = self._conn
        text = " ".join(getattr(block, "text", "") for block in prompt)
        await conn.session_update(session_id, update_agent_thought_text("**Planning**"))
        await conn.session_update(
            session_id,
            update_plan([plan_entry("write notes.txt", priority="high", status="in_progress")]),
        )
        path = os.path.join(self._cwd, "notes.txt")
        await conn.session_update(
            session_id, start_edit_tool_call("edit-1", "Write notes.txt", path, text)
        )
        answer = await conn.request_permission(
            session_id,
            ToolCallUpdate(tool_call_id="edit-1"),
            [
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        if outcome.outcome == "selected" and outcome.option_id == "allow":
            await conn.write_text_file(session_id=session_id, path=path, content=text + "\n")
            await conn.session_update(
                session_id,
                update_tool_call(
                    "edit-1",
                    status="completed",
                    content=[tool_diff_content(path, text + "\n")],
                ),
            )
        else:
            await conn.session_update(
                session_id,
                update_tool_call(
                    "edit-1", status="failed", content=[tool_content(text_block("denied"))]
                ),
            )
        if self._capabilities.terminal:
            terminal = await conn.create_terminal(session_id, "echo", args=["from", "terminal"])
            await conn.wait_for_terminal_exit(session_id, terminal.terminal_id)
            output = await conn.terminal_output(session_id, terminal.terminal_id)
            await conn.release_terminal(session_id, terminal.terminal_id)
            await conn.session_update(session_id, update_agent_message(text_block(output.output)))
        await conn.session_update(session_id, update_current_mode("focused"))
        await conn.session_update(session_id, update_agent_message(text_block(f"Noted: {text}")))
        return PromptResponse(
            stop_reason="end_turn",
            usage=Usage(total_tokens=30, input_tokens=20, output_tokens=10, cached_read_tokens=5),
        )


if __name__ == "__main__":
    agent: Agent = SdkAgent()  # type: ignore[assignment]
    asyncio.run(run_agent(agent))
