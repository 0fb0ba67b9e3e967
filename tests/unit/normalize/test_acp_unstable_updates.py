"""Session updates the ACP schema marks unstable (1.21): each is a typed event where the
vocabulary has one (a ``notice`` is a `Notice`, a compaction a `SessionUpdated`, a tool call's
``name`` the started call's name), else kept raw (`Unknown`), and never a crash. From the frame
an agent writes through the connection and the reducer, as the runner drives them."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings, strategies as st

from gemwire._normalize.acp import AcpNormalizer
from gemwire.events import (
    Event,
    Notice,
    SessionUpdated,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallUpdated,
    Unknown,
)
from gemwire.protocol.acp import AcpClientConnection, SessionUpdate, UnknownUpdate
from gemwire.wire import acp

A, S = "acp:x", "s"


def params(update: dict[str, Any]) -> str:
    return json.dumps({"sessionId": S, "update": update}, separators=(",", ":"))


def frame(update: dict[str, Any]) -> bytes:
    return f'{{"jsonrpc":"2.0","method":"session/update","params":{params(update)}}}\n'.encode()


def events_of(*updates: dict[str, Any]) -> list[Event]:
    conn = AcpClientConnection()
    n = AcpNormalizer(agent=A, session_id=S)
    n.prompt_sent([acp.TextContent(text="go")])
    out: list[Event] = []
    for item in conn.receive_data(b"".join(frame(u) for u in updates)):
        assert isinstance(item, SessionUpdate | UnknownUpdate)
        out += n.feed(item)
    return out


def test_a_notice_is_a_notice_from_upstream() -> None:
    assert events_of(
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Quota low",
            "description": "10% left",
        },
        {"sessionUpdate": "notice", "severity": "info", "title": "Indexed", "description": None},
        {"sessionUpdate": "notice", "severity": "_vendor_loud", "title": "Custom"},
    ) == [
        Notice(
            agent=A,
            session_id=S,
            severity="warning",
            message="Quota low: 10% left",
            source="upstream",
        ),
        Notice(agent=A, session_id=S, severity="info", message="Indexed", source="upstream"),
        Notice(agent=A, session_id=S, severity="info", message="Custom", source="upstream"),
    ]


def test_compactions_are_session_updates_with_their_fields_as_sent() -> None:
    started = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"}
    chunk = {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": "c1",
        "content": {"type": "text", "text": "We fixed the parser."},
    }
    done = {
        "sessionUpdate": "compaction_update",
        "compactionId": "c1",
        "status": "completed",
        "error": None,
    }
    assert events_of(started, chunk, done) == [
        SessionUpdated(
            agent=A,
            session_id=S,
            update="compaction_update",
            data={"compactionId": "c1", "status": "in_progress"},
        ),
        SessionUpdated(
            agent=A,
            session_id=S,
            update="compaction_summary_chunk",
            data={
                "compactionId": "c1",
                "content": {"type": "text", "text": "We fixed the parser."},
            },
        ),
        # ``null`` clears (a patch), so it is kept apart from an omitted member.
        SessionUpdated(
            agent=A,
            session_id=S,
            update="compaction_update",
            data={"compactionId": "c1", "status": "completed", "error": None},
        ),
    ]


def test_a_tool_call_name_names_the_call_and_a_bad_one_costs_nothing() -> None:
    named = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Read a.py",
        "kind": "read",
        "name": "read_file",
    }
    bad = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t2",
        "title": "ls",
        "kind": "execute",
        "name": 7,
    }
    started = [e for e in events_of(named, bad) if isinstance(e, ToolCallStarted)]
    assert [(e.call_id, e.name, e.kind) for e in started] == [
        ("t1", "read_file", "read"),
        ("t2", "execute", "execute"),
    ]


def test_a_misshapen_unstable_update_is_kept_raw() -> None:
    bad = {"sessionUpdate": "notice", "severity": "info"}  # no title
    (event,) = events_of(bad)
    assert isinstance(event, Unknown)
    assert (event.upstream_type, json.loads(event.raw)["update"]) == ("notice", bad)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_KINDS = (
    "plan_update",
    "plan_removed",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
    "tool_call",
)
_MEMBERS = (
    "severity",
    "title",
    "description",
    "compactionId",
    "status",
    "summary",
    "error",
    "content",
    "plan",
    "planId",
    "name",
    "toolCallId",
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_KINDS), st.dictionaries(st.sampled_from(_MEMBERS), _json, max_size=6))
def test_any_unstable_update_is_an_event_and_never_raises(
    kind: str, members: dict[str, Any]
) -> None:
    events = events_of({"sessionUpdate": kind, **members})
    assert events
    assert {type(e) for e in events} <= {
        Notice,
        SessionUpdated,
        Unknown,
        ToolCallStarted,
        ToolCallUpdated,
        ToolCallFinished,
    }
