from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import msgspec
import pytest

from gemwire import events
from gemwire.events import (
    ERROR_KINDS,
    TOOL_KINDS,
    Event,
    FileChanged,
    Location,
    MessageDelta,
    ModelUsage,
    Notice,
    PermissionOption,
    PermissionRequested,
    PermissionResolved,
    PlanEntry,
    PlanUpdated,
    SessionStarted,
    SessionUpdated,
    ThoughtDelta,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallUpdated,
    ToolError,
    TurnCompleted,
    TurnError,
    Unknown,
    UsageReported,
    UserMessage,
    decode_event,
    encode_event,
    event_schema,
)

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "events.schema.json"

USAGE = TokenUsage(
    input_tokens=301,
    output_tokens=31,
    cached_tokens=0,
    total_tokens=332,
    by_model={
        "gemini-3.8-flash": ModelUsage(
            input_tokens=300, output_tokens=30, cached_tokens=0, total_tokens=330
        )
    },
)

ONE_OF_EACH: list[Event] = [
    SessionStarted(agent="gemini", session_id="s", model="auto", cwd="/w", agent_version="0.61.0"),
    UserMessage(agent="gemini", session_id="s", text="fix it"),
    MessageDelta(agent="gemini", session_id="s", text="On it."),
    ThoughtDelta(agent="acp:gemini-cli", session_id="s", text="**Plan**"),
    ToolCallStarted(
        agent="gemini",
        session_id="s",
        call_id="c1",
        name="mcp_github_get_issue",
        kind="other",
        title="get_issue",
        input={"n": 1},
        locations=[Location(path="/w/a.py", line=3)],
        mcp_server="github",
        mcp_tool="get_issue",
    ),
    ToolCallUpdated(
        agent="acp:x", session_id="s", call_id="c1", status="in_progress", content="50%"
    ),
    ToolCallFinished(
        agent="gemini",
        session_id="s",
        call_id="c1",
        status="failed",
        output="nope",
        error=ToolError(type="tool_not_registered", message="nope"),
    ),
    FileChanged(
        agent="gemini", session_id="s", path="/w/a.py", change="written", call_id="c2", derived=True
    ),
    PlanUpdated(
        agent="acp:x",
        session_id="s",
        entries=[PlanEntry(content="step", status="pending", priority="high")],
    ),
    PermissionRequested(
        agent="acp:x",
        session_id="s",
        request_id="0",
        call_id="c3",
        options=[PermissionOption(option_id="proceed_once", name="Allow", kind="allow_once")],
    ),
    PermissionResolved(agent="acp:x", session_id="s", request_id="0", call_id="c3", option_id=None),
    SessionUpdated(
        agent="acp:x", session_id="s", update="current_mode_update", data={"currentModeId": "yolo"}
    ),
    events.PlanRemoved(agent="acp:x", session_id="s", plan_id="p1"),
    events.SubagentUpdated(agent="acp:x", session_id="s", child_session_id="c", state="running"),
    events.SessionMessage(agent="acp:x", session_id="s", message_id="m", text="hi", delta=True),
    events.AuthStatus(agent="acp:x", kind="api_key", label="API key"),
    UsageReported(agent="gemini", session_id="s", usage=USAGE),
    Notice(
        agent="gemini",
        session_id="s",
        severity="warning",
        message="Loop detected",
        source="upstream",
    ),
    TurnCompleted(
        agent="gemini",
        session_id="s",
        ok=False,
        stop_reason="error",
        error=TurnError(kind="rate_limited", message="Resource has been exhausted", exit_code=173),
        answer="partial",
        usage=USAGE,
        duration_ms=0,
    ),
    Unknown(agent="gemini", session_id=None, upstream_type="telemetry", raw='{"type":"telemetry"}'),
]


def test_one_of_each_event_type_is_covered() -> None:
    assert {type(e) for e in ONE_OF_EACH} == set(get_args(Event))


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_json(event: Event) -> None:
    line = encode_event(event)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert decode_event(line) == event
    document = json.loads(line)
    assert list(document)[:3] == ["type", "agent", "session_id"]


def test_the_wire_shape_is_exact() -> None:
    assert encode_event(MessageDelta(agent="gemini", session_id="s1", text="Hi")) == (
        b'{"type":"message_delta","agent":"gemini","session_id":"s1","text":"Hi"}\n'
    )
    assert json.loads(encode_event(ONE_OF_EACH[-2])) == {
        "type": "turn_completed",
        "agent": "gemini",
        "session_id": "s",
        "ok": False,
        "stop_reason": "error",
        "error": {
            "kind": "rate_limited",
            "message": "Resource has been exhausted",
            "exit_code": 173,
        },
        "answer": "partial",
        "usage": {
            "input_tokens": 301,
            "output_tokens": 31,
            "cached_tokens": 0,
            "total_tokens": 332,
            "by_model": {
                "gemini-3.8-flash": {
                    "input_tokens": 300,
                    "output_tokens": 30,
                    "cached_tokens": 0,
                    "total_tokens": 330,
                }
            },
        },
        "duration_ms": 0,
    }


def test_type_tags_are_the_published_vocabulary() -> None:
    tags = sorted(t.__struct_config__.tag for t in get_args(Event))
    assert tags == sorted(
        [
            "session_started",
            "user_message",
            "message_delta",
            "thought_delta",
            "tool_call_started",
            "tool_call_updated",
            "tool_call_finished",
            "file_changed",
            "plan_updated",
            "permission_requested",
            "permission_resolved",
            "usage",
            "notice",
            "turn_completed",
            "session_updated",
            "unknown",
            "plan_removed",
            "subagent_updated",
            "session_message",
            "auth_status",
        ]
    )


def test_kinds() -> None:
    assert TOOL_KINDS == (
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    )
    assert "rate_limited" in ERROR_KINDS
    assert "turn_limit" in ERROR_KINDS
    # Values upstream adds later still decode (typed as str, not rejected).
    event = decode_event(
        b'{"type":"tool_call_started","agent":"acp:x","session_id":null,"call_id":"1",'
        b'"name":"t","kind":"teleport","title":"t"}'
    )
    assert isinstance(event, ToolCallStarted)
    assert event.kind == "teleport"


def test_events_are_immutable() -> None:
    with pytest.raises(AttributeError):
        MessageDelta(agent="gemini", text="a").text = "b"  # type: ignore[misc]


def test_published_schema_is_current() -> None:
    """docs/events.schema.json is generated; regenerate with the command in docs/events.md."""
    assert json.loads(SCHEMA_FILE.read_text()) == event_schema()


def test_all_is_complete() -> None:
    # (Its order is checked by ruff's RUF022.)
    public = {
        n
        for n, v in vars(events).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == events.__name__
    }
    assert public <= set(events.__all__)
    assert isinstance(msgspec.json.schema(Event), dict)


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_the_type_attribute_is_the_json_tag(event: Event) -> None:
    assert event.type == json.loads(encode_event(event))["type"]


def test_the_replay_marker_is_absent_from_json_unless_set() -> None:
    plain = MessageDelta(agent="acp:x", session_id="s", text="a")
    assert (
        encode_event(plain)
        == b'{"type":"message_delta","agent":"acp:x","session_id":"s","text":"a"}\n'
    )
    replayed = MessageDelta(agent="acp:x", session_id="s", text="a", replay=True)
    assert encode_event(replayed) == (
        b'{"type":"message_delta","agent":"acp:x","session_id":"s","replay":true,"text":"a"}\n'
    )
    assert decode_event(encode_event(replayed)) == replayed


def test_retry_delay_is_in_the_json_only_when_google_named_one() -> None:
    def turn(error: events.TurnError) -> events.TurnCompleted:
        return events.TurnCompleted(
            agent="gemini", ok=False, stop_reason="error", error=error, answer=""
        )

    limited = events.TurnError(kind="rate_limited", message="m", exit_code=173, retry_delay=7.0)
    assert json.loads(events.encode_event(turn(limited)))["error"] == {
        "kind": "rate_limited",
        "message": "m",
        "exit_code": 173,
        "retry_delay": 7.0,
    }
    assert events.decode_event(events.encode_event(turn(limited))) == turn(limited)
    plain = events.TurnError(kind="api", message="m", exit_code=244)
    assert json.loads(events.encode_event(turn(plain)))["error"] == {
        "kind": "api",
        "message": "m",
        "exit_code": 244,
    }
