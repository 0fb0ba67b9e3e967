"""The ACP reducer: updates, permissions and prompt results -> normalized events."""

from __future__ import annotations

import time
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from gemwire._normalize.acp import AcpNormalizer
from gemwire._normalize.acp_errors import error_for
from gemwire.events import (
    FileChanged,
    MessageDelta,
    ModelUsage,
    Notice,
    PermissionOption,
    PermissionRequested,
    SessionUpdated,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallUpdated,
    ToolError,
    TurnCompleted,
    TurnError,
    Unknown,
)
from gemwire.protocol.acp import SessionUpdate, UnknownUpdate
from gemwire.wire import acp
from gemwire.wire.jsonrpc import ErrorObject

A, S = "acp:x", "s"


def norm() -> AcpNormalizer:
    n = AcpNormalizer(agent=A, session_id=S)
    n.prompt_sent([acp.TextContent(text="go")])
    return n


def upd(update_kind: str, **fields: Any) -> SessionUpdate:
    typ = acp.update.KINDS[update_kind]
    return SessionUpdate(session_id=S, update=msgspec.convert(fields, typ))


def test_text_thoughts_and_answer_across_tool_calls() -> None:
    n = norm()
    events = []
    for item in [
        upd("agent_thought_chunk", content={"type": "text", "text": "hmm"}),
        upd("agent_message_chunk", content={"type": "text", "text": "Reading."}),
        upd("tool_call", toolCallId="t1", title="a.py", kind="read", status="in_progress"),
        upd(
            "tool_call_update",
            toolCallId="t1",
            status="completed",
            content=[{"type": "content", "content": {"type": "text", "text": "file body"}}],
        ),
        upd("agent_message_chunk", content={"type": "text", "text": "Done."}),
    ]:
        events += n.feed(item)
    assert [e.type for e in events] == [
        "thought_delta",
        "message_delta",
        "tool_call_started",
        "tool_call_finished",
        "message_delta",
    ]
    assert events[3] == ToolCallFinished(
        agent=A, session_id=S, call_id="t1", status="completed", output="file body"
    )
    (done,) = n.finish(acp.PromptResponse(stop_reason="end_turn"), duration_ms=5)
    assert isinstance(done, TurnCompleted)
    assert (done.ok, done.answer, done.duration_ms) == (True, "Reading.\n\nDone.", 5)


def test_diffs_become_file_changes_and_a_unified_diff() -> None:
    n = norm()
    n.feed(upd("tool_call", toolCallId="w", title="w", kind="edit", status="pending"))
    events = n.feed(
        upd(
            "tool_call_update",
            toolCallId="w",
            status="completed",
            content=[
                {
                    "type": "diff",
                    "path": "/w/new.txt",
                    "oldText": "",
                    "newText": "hi\n",
                    "_meta": {"kind": "add"},
                },
                {"type": "diff", "path": "/w/old.txt", "oldText": "a\n", "newText": "b\n"},
                {"type": "diff", "path": "/w/spec.txt", "newText": "x\n"},
            ],
        )
    )
    assert [(e.path, e.change) for e in events if isinstance(e, FileChanged)] == [
        ("/w/new.txt", "created"),
        ("/w/old.txt", "modified"),
        ("/w/spec.txt", "created"),
    ]
    finished = events[0]
    assert isinstance(finished, ToolCallFinished)
    assert finished.diff is not None
    assert "--- /w/old.txt\n+++ /w/old.txt\n@@ -1 +1 @@\n-a\n+b\n" in finished.diff
    assert "--- /dev/null\n+++ /w/spec.txt\n" in finished.diff


def test_a_failed_call_and_progress() -> None:
    n = norm()
    events = n.feed(upd("tool_call_update", toolCallId="u", status="in_progress", title="Run"))
    assert [e.type for e in events] == ["tool_call_started", "tool_call_updated"]
    assert events[1] == ToolCallUpdated(agent=A, session_id=S, call_id="u", status="in_progress")
    events = n.feed(
        upd(
            "tool_call_update",
            toolCallId="u",
            status="failed",
            content=[{"type": "content", "content": {"type": "text", "text": "boom"}}],
        )
    )
    assert events == [
        ToolCallFinished(
            agent=A,
            session_id=S,
            call_id="u",
            status="failed",
            output="boom",
            error=ToolError(type="failed", message="boom"),
        )
    ]


def test_a_call_announced_only_in_a_permission_request_and_rejected() -> None:
    n = norm()
    request = acp.RequestPermissionRequest(
        session_id=S,
        tool_call=acp.ToolCallUpdate(
            tool_call_id="p", title="Writing", kind="edit", status="pending"
        ),
        options=[acp.PermissionOption(option_id="no", name="Reject", kind="reject_once")],
    )
    events = n.permission_requested("0", request)
    assert [e.type for e in events] == ["tool_call_started", "permission_requested"]
    assert isinstance(events[0], ToolCallStarted)
    assert events[0].kind == "edit"
    n.permission_resolved("0", "p", request.options[0])
    events = n.feed(upd("agent_message_chunk", content={"type": "text", "text": "ok"}))
    assert events[0] == ToolCallFinished(
        agent=A,
        session_id=S,
        call_id="p",
        status="cancelled",
        error=ToolError(type="rejected", message="permission not given (Reject)"),
    )
    assert isinstance(events[1], MessageDelta)


def test_a_permission_request_says_what_it_asks_about() -> None:
    """The request's toolCall (title, kind, the diff of an edit, text) was applied to the
    call and never emitted: a permission dialog could not show what it asked about."""
    n = norm()
    n.feed(upd("tool_call", toolCallId="e", title="Edit", kind="edit", status="pending"))
    diff = acp.Diff(path="/w/a.txt", old_text="one\n", new_text="two\n")
    note = acp.Content(content=acp.TextContent(text="Replace one line"))
    request = acp.RequestPermissionRequest(
        session_id=S,
        tool_call=acp.ToolCallUpdate(tool_call_id="e", title="Edit a.txt", content=[diff, note]),
        options=[acp.PermissionOption(option_id="yes", name="Allow", kind="allow_once")],
    )
    assert n.permission_requested("7", request) == [
        PermissionRequested(
            agent=A,
            session_id=S,
            request_id="7",
            call_id="e",
            options=[PermissionOption(option_id="yes", name="Allow", kind="allow_once")],
            title="Edit a.txt",
            kind="edit",
            diff="--- /w/a.txt\n+++ /w/a.txt\n@@ -1 +1 @@\n-one\n+two\n",
            content="Replace one line",
        )
    ]
    bare = acp.RequestPermissionRequest(
        session_id=S, tool_call=acp.ToolCallUpdate(tool_call_id="x"), options=[]
    )
    (_, asked) = n.permission_requested("8", bare)
    assert isinstance(asked, PermissionRequested)
    assert (asked.title, asked.kind, asked.diff, asked.content) == (None, "other", None, None)


def test_state_updates_and_unknown_kinds() -> None:
    n = norm()
    assert n.feed(upd("current_mode_update", currentModeId="yolo")) == [
        SessionUpdated(
            agent=A, session_id=S, update="current_mode_update", data={"currentModeId": "yolo"}
        )
    ]
    assert n.feed(
        upd("usage_update", used=10, size=100, cost={"amount": 0.5, "currency": "USD"})
    ) == [
        SessionUpdated(
            agent=A,
            session_id=S,
            update="usage_update",
            data={"used": 10, "size": 100, "cost": {"amount": 0.5, "currency": "USD"}},
        )
    ]
    raw = '{"sessionId":"s","update":{"sessionUpdate":"x"}}'
    assert n.feed(UnknownUpdate(session_id=S, kind="x", raw=raw, reason="r")) == [
        Unknown(agent=A, session_id=S, upstream_type="x", raw=raw)
    ]


def test_replayed_history_is_marked_and_not_part_of_the_answer() -> None:
    n = AcpNormalizer(agent=A, session_id=S)
    n.begin_replay()
    events = n.feed(upd("agent_message_chunk", content={"type": "text", "text": "old"}))
    assert events == [MessageDelta(agent=A, session_id=S, text="old", replay=True)]
    n.prompt_sent([acp.TextContent(text="new")])
    assert (
        n.feed(upd("agent_message_chunk", content={"type": "text", "text": "new"}))[0].replay
        is msgspec.UNSET
    )
    assert n.answer == "new"


def test_gemini_quota_meta_and_standard_usage() -> None:
    quota: dict[str, object] = {
        "quota": {
            "token_count": {"input_tokens": 250, "output_tokens": 25},
            "model_usage": [
                {"model": "m1", "token_count": {"input_tokens": 100, "output_tokens": 20}},
                {"model": "auto", "token_count": {"input_tokens": 150, "output_tokens": 5}},
            ],
        }
    }
    events = norm().finish(acp.PromptResponse(stop_reason="end_turn", meta=quota))
    assert events[0].type == "usage"
    assert events[-1].usage == TokenUsage(  # type: ignore[union-attr]
        input_tokens=250,
        output_tokens=25,
        total_tokens=275,
        by_model={
            "m1": ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120),
            "auto": ModelUsage(input_tokens=150, output_tokens=5, total_tokens=155),
        },
    )
    usage = acp.Usage(total_tokens=9, input_tokens=5, output_tokens=4, cached_read_tokens=2)
    done = norm().finish(acp.PromptResponse(stop_reason="max_tokens", usage=usage))[-1]
    assert isinstance(done, TurnCompleted)
    assert (done.ok, done.stop_reason, done.usage) == (
        True,
        "max_tokens",
        TokenUsage(input_tokens=5, output_tokens=4, cached_tokens=2, total_tokens=9),
    )


def test_a_cancelled_turn_and_calls_left_open() -> None:
    n = norm()
    n.feed(upd("tool_call", toolCallId="t", title="t", status="in_progress"))
    events = n.finish(acp.PromptResponse(stop_reason="end_turn"))
    assert [e.type for e in events] == ["notice", "tool_call_finished", "turn_completed"]
    assert isinstance(events[0], Notice)
    n = norm()
    n.feed(upd("tool_call", toolCallId="t", title="t", status="in_progress"))
    n.cancel_requested()
    events = n.finish(acp.PromptResponse(stop_reason="cancelled"))
    assert [e.type for e in events] == ["tool_call_finished", "turn_completed"]
    assert events[-1].error == TurnError(kind="cancelled", message="the turn was cancelled")  # type: ignore[union-attr]


def test_agent_errors_are_typed() -> None:
    def kind(code: int, message: str, data: Any = None) -> str:
        return str(error_for(ErrorObject(code=code, message=message, data=data), "m").kind)

    bad_key = '{"error":{"code":400,"message":"API key not valid. Please pass a valid API key."}}'
    assert kind(400, bad_key) == "auth"
    assert kind(429, "Resource has been exhausted (e.g. check quota).") == "rate_limited"
    assert kind(-32000, "Authentication required") == "auth"
    assert kind(500, "Internal error encountered.") == "api"
    assert kind(-32603, "Internal error", {"details": "x"}) == "agent"
    assert kind(-32601, "Method not found") == "agent"
    assert error_for(
        ErrorObject(code=-32603, message="Internal error", data={"details": "why"}), ""
    ).message == ("Internal error: why")


KINDS = ["agent_message_chunk", "tool_call", "tool_call_update", "plan", "current_mode_update"]


@st.composite
def updates(draw: st.DrawFn) -> SessionUpdate:
    kind = draw(st.sampled_from(KINDS))
    call = draw(st.sampled_from(["a", "b", "c"]))
    status = draw(st.sampled_from([None, "pending", "in_progress", "completed", "failed"]))
    every: dict[str, dict[str, Any]] = {
        "agent_message_chunk": {"content": {"type": "text", "text": "x"}},
        "tool_call": {"toolCallId": call, "title": "t", "status": status},
        "tool_call_update": {"toolCallId": call, "status": status},
        "plan": {"entries": [{"content": "c", "priority": "low", "status": "pending"}]},
        "current_mode_update": {"currentModeId": "m"},
    }
    return upd(kind, **every[kind])


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(updates(), max_size=30), st.booleans())
def test_every_started_call_finishes_once_and_the_turn_completes_once(
    items: list[SessionUpdate], cancelled: bool
) -> None:
    n = norm()
    events = [e for item in items for e in n.feed(item)]
    if cancelled:
        n.cancel_requested()
    events += n.finish(acp.PromptResponse(stop_reason="cancelled" if cancelled else "end_turn"))
    started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
    finished = [e.call_id for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(started) == sorted(finished)
    for call_id in set(started):
        first_start = next(
            i
            for i, e in enumerate(events)
            if isinstance(e, ToolCallStarted) and e.call_id == call_id
        )
        first_finish = next(
            i
            for i, e in enumerate(events)
            if isinstance(e, ToolCallFinished) and e.call_id == call_id
        )
        assert first_start < first_finish
    assert [e.type for e in events].count("turn_completed") == 1
    assert events[-1].type == "turn_completed"


def test_resource_not_found_is_bad_input_not_a_missing_agent() -> None:
    error = error_for(ErrorObject(code=-32002, message="Resource not found: session x"), "m")
    assert (error.kind, error.message) == ("input", "m: Resource not found: session x")


def test_a_90000_line_diff_does_not_hold_the_event_loop() -> None:
    n = norm()
    n.feed(upd("tool_call", toolCallId="w", title="w", kind="edit", status="pending"))
    old = "".join(f"line {i}\n" for i in range(90_000))
    new = "".join(f"line {i * 7 % 90_000}\n" for i in range(90_000))
    started = time.monotonic()
    content = [{"type": "diff", "path": "/w/big.txt", "oldText": old, "newText": new}]
    events = n.feed(upd("tool_call_update", toolCallId="w", status="completed", content=content))
    assert time.monotonic() - started < 5  # difflib took 25 s
    finished = events[0]
    assert isinstance(finished, ToolCallFinished)
    assert finished.diff == (
        "--- /w/big.txt\n+++ /w/big.txt\n"
        "(not computed: 90000 -> 90000 lines, over the 5000-line limit)\n"
    )
    assert [(e.path, e.change) for e in events if isinstance(e, FileChanged)] == [
        ("/w/big.txt", "modified")
    ]
