"""The frames today's agents sent gemwire (tests/fixtures/acp-1.24/, recorded from the real
agents by tests/e2e/agents/test_acp_124_live.py) through the connection and the reducer, as
the runner drives them: exact event sequences, and every frame decoded into its wire type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kit.corpus import FIXTURES

from gemwire._normalize.acp import AcpNormalizer
from gemwire._normalize.acp_ext import agent_notification
from gemwire._normalize.acp_updates import config_model
from gemwire.events import (
    AgentCost,
    AuthStatus,
    Event,
    ModelUsage,
    Notice,
    SessionUpdated,
    TokenUsage,
    ToolCallFinished,
    ToolError,
    TurnCompleted,
)
from gemwire.protocol.acp import (
    AcpClientConnection,
    AgentNotification,
    SessionUpdate,
    UnknownUpdate,
)
from gemwire.wire import acp

FRAMES = FIXTURES / "acp-1.24"


class Replay:
    """The runner's part, from the frames: each session's reducer, fed what the agent sent
    and told what the client did."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.sessions: dict[str, AcpNormalizer] = {}
        self.asked: dict[Any, str] = {}  # request id -> method, of the client's requests
        self.prompts: dict[Any, str] = {}  # the prompt's request id -> its session
        self.events: list[Event] = []
        self.held: list[Event] = []  # for no session yet: they go to the next one opened
        self.connection = AcpClientConnection()

    def client(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if "id" in message and method:
            self.asked[message["id"]] = method
        if method == "session/prompt":
            self.prompts[message["id"]] = params["sessionId"]
            prompt = msgspec.convert(params, acp.PromptRequest).prompt
            self.events += self.sessions[params["sessionId"]].prompt_sent(prompt)
        elif method == "session/cancel":
            self.sessions[params["sessionId"]].cancel_requested()

    def agent_frame(self, line: str, message: dict[str, Any]) -> None:
        method = self.asked.get(message.get("id")) if "method" not in message else None
        if method == "session/new":
            opened = msgspec.convert(message["result"], acp.NewSessionResponse)
            model = (
                opened.models.current_model_id
                if opened.models
                else config_model(opened.config_options or [])
            )
            n = self.sessions[opened.session_id] = AcpNormalizer(
                agent=self.agent, session_id=opened.session_id
            )
            self.events += n.started(cwd="{root}/workspace", model=model, new=True)
            self.events += self.held
            self.held = []
        elif method == "session/prompt":
            response = msgspec.convert(message["result"], acp.PromptResponse)
            sid = self.prompts[message["id"]]
            self.events += self.sessions[sid].finish(response, duration_ms=0)
        if "method" not in message:
            return
        for item in self.connection.receive_data(line.encode() + b"\n"):
            if isinstance(item, SessionUpdate | UnknownUpdate):
                self.events += self.sessions[item.session_id or ""].feed(item)
            elif isinstance(item, AgentNotification):
                known = agent_notification(self.agent, item.method, item.params)
                assert known is not None, item
                (self.events if self.sessions else self.held).append(known)

    def permission(self, request: dict[str, Any], answer: dict[str, Any]) -> None:
        params = msgspec.convert(request["params"], acp.RequestPermissionRequest)
        n = self.sessions[params.session_id]
        self.events += n.permission_requested(str(request["id"]), params)
        outcome = answer["result"]["outcome"]
        option = next((o for o in params.options if o.option_id == outcome.get("optionId")), None)
        self.events += n.permission_resolved(
            str(request["id"]), params.tool_call.tool_call_id, option
        )


def replay(name: str, agent: str) -> list[Event]:
    r = Replay(agent)
    asking: dict[Any, dict[str, Any]] = {}
    for line in (FRAMES / f"{name}.frames").read_text().splitlines():
        side, text = line[:1], line[2:]
        message = json.loads(text)
        if side == ">":
            if message.get("id") in asking:
                r.permission(asking.pop(message["id"]), message)
            else:
                r.client(message)
        elif message.get("method") == "session/request_permission":
            asking[message["id"]] = message
        else:
            r.agent_frame(text, message)
    return r.events


def visible(events: list[Event]) -> list[Event]:
    """Without the state updates whose timing varies run to run (a marker's stays)."""
    return [e for e in events if not (isinstance(e, SessionUpdated) and not e.origin)]


def test_claude_agent_acp_0_101_0() -> None:
    events = visible(replay("claude-agent-acp-0.101.0-answer", "acp:claude"))
    assert [e.type for e in events] == [
        "session_started",
        "auth_status",
        "user_message",
        "message_delta",
        "notice",
        "usage",
        "turn_completed",
    ]
    assert events[0].model == "default"  # type: ignore[union-attr]  # configOptions only
    assert events[1] == AuthStatus(
        agent="acp:claude", kind="api_key", label="Anthropic API key", detail="ANTHROPIC_API_KEY"
    )
    notice = events[4]
    assert isinstance(notice, Notice)
    assert (notice.severity, notice.source) == ("warning", "upstream")
    assert notice.message.startswith("Claude reported a warning: We're changing auto mode")
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.answer == "Hello there"
    counts = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0, "total_tokens": 110}
    assert completed.usage == TokenUsage(
        **counts,
        by_model={"claude-opus-5-5": ModelUsage(**counts)},
        context_tokens=110,
        context_window=1000000,
    )
    assert completed.agent_cost == AgentCost(
        currency="USD", session_total=0.0006000000000000001, turn=0.0006
    )


def test_codex_acp_2_6_0() -> None:
    events = visible(replay("codex-acp-2.6.0-answer", "acp:codex"))
    assert [e.type for e in events] == [
        "session_started",
        "auth_status",
        "user_message",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    assert events[0].model == "gpt-5.5[medium]"  # type: ignore[union-attr]  # its models list
    assert events[1] == AuthStatus(
        agent="acp:codex", kind="gateway", label="Custom model gateway", detail="gemwire"
    )
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.answer == "Hello there"
    assert completed.usage is not None
    assert list(completed.usage.by_model) == ["gpt-5.5"]
    assert (completed.usage.context_tokens, completed.usage.context_window) == (110, 258400)


def test_gemini_0_61_0_mode_marker_and_cancelled_shell_call() -> None:
    events = visible(replay("gemini-0.61.0-mode-and-cancel", "acp:gemini-cli"))
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "tool_call_started",
        "permission_requested",
        "permission_resolved",
        "session_updated",
        "tool_call_finished",
        "file_changed",
        "message_delta",
        "usage",
        "turn_completed",
        "session_started",
        "user_message",
        "tool_call_started",
        "permission_requested",
        "permission_resolved",
        "tool_call_finished",
        "turn_completed",
    ]
    marker = events[5]
    assert isinstance(marker, SessionUpdated)
    assert (marker.update, marker.data, marker.origin) == (
        "current_mode_update",
        {"currentModeId": "autoEdit"},
        "message_text",
    )
    first = events[10]
    assert isinstance(first, TurnCompleted)
    assert first.answer == "Done: wrote a.txt"
    finished = events[-2]
    assert isinstance(finished, ToolCallFinished)
    assert (finished.status, finished.output, finished.error) == (
        "cancelled",
        "Command cancelled by user.",
        ToolError(type="cancelled", message="the turn was cancelled while the call ran"),
    )
    last = events[-1]
    assert isinstance(last, TurnCompleted)
    assert (last.stop_reason, last.answer) == ("cancelled", "")


NEW_IN_1_24 = {"usage_update", "notice", "plan_update", "plan_removed", "subagent_update"}


@pytest.mark.parametrize("path", sorted(FRAMES.glob("*.frames")), ids=lambda p: p.stem)
def test_every_update_frame_decodes_into_its_type(path: Path) -> None:
    """Each update into the type of its kind (strictly); the kinds new since 1.21 field for
    field."""
    for line in path.read_text().splitlines():
        message = json.loads(line[2:])
        if message.get("method") != "session/update":
            continue
        update = message["params"]["update"]
        kind = update.pop("sessionUpdate")
        decoded = msgspec.convert(update, acp.SESSION_UPDATE_TYPES[kind])
        if kind in NEW_IN_1_24:
            assert json.loads(msgspec.json.encode(decoded)) == update
