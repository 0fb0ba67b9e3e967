"""SessionFollower on a session file written line by line, and the estimates on turn_completed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from gemwire.events import (
    Event,
    FileChanged,
    ModelUsage,
    Notice,
    ThoughtDelta,
    TokenUsage,
    TurnCompleted,
)
from gemwire.runners._session_follower import SessionFollower, files_changed, with_estimates

SESSION = "5e1e1ecd-0000-4000-8000-000000000001"
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC).timestamp()


def _at(seconds: float) -> str:
    return datetime.fromtimestamp(NOW + seconds, UTC).isoformat().replace("+00:00", "Z")


def _message(message_id: str, seconds: float, thoughts: list[str], **more: object) -> bytes:
    record = {
        "id": message_id,
        "timestamp": _at(seconds),
        "type": "gemini",
        "content": "",
        "thoughts": [{"subject": t, "description": f"about {t}"} for t in thoughts],
        "tokens": {"input": 120, "output": 8, "cached": 0, "thoughts": 5, "tool": 0, "total": 133},
        "model": "gemini-2.5-flash",
        **more,
    }
    return json.dumps(record).encode() + b"\n"


def _home(tmp_path: Path) -> tuple[Path, Path, Path]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    chats = tmp_path / "home" / ".gemini" / "tmp" / "workspace" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(str(workspace))
    registry = {"projects": {str(workspace): "workspace"}}
    (tmp_path / "home" / ".gemini" / "projects.json").write_text(json.dumps(registry))
    return tmp_path / "home", workspace, chats / f"session-2026-11-23T10-00-{SESSION[:8]}.jsonl"


def test_thoughts_come_once_in_order_as_the_file_grows(tmp_path: Path) -> None:
    home, workspace, path = _home(tmp_path)
    known: list[str | None] = [None]
    follower = SessionFollower(str(home), str(workspace), lambda: known[0], NOW)
    assert follower.poll() == []  # no session id yet
    known[0] = SESSION
    header = {"sessionId": SESSION, "projectHash": "x", "startTime": _at(0), "kind": "main"}
    history = _message("old", -3600, ["Earlier"])  # a resumed session's history
    first = _message("m1", 1, ["Planning", "Checking"])
    path.write_bytes(json.dumps(header).encode() + b"\n" + history + first[:40])
    assert follower.poll() == []  # the message line is not complete yet
    with path.open("ab") as file:
        file.write(first[40:])
    thoughts = follower.poll()
    assert [(type(e), e.text, e.origin) for e in thoughts if isinstance(e, ThoughtDelta)] == [
        (ThoughtDelta, "**Planning**\n\nabout Planning", "session_file"),
        (ThoughtDelta, "**Checking**\n\nabout Checking", "session_file"),
    ]
    assert follower.poll() == []
    # The same message upserted with its tool call: no thought again, the exact change once.
    diff = {
        "fileDiff": "@@ -0,0 +1 @@\n+hi\n",
        "fileName": "notes.txt",
        "filePath": str(workspace / "notes.txt"),
        "originalContent": None,
        "newContent": "hi\n",
        "isNewFile": True,
    }
    call = {
        "id": "write_file_1",
        "name": "write_file",
        "args": {"file_path": "notes.txt"},
        "status": "success",
        "timestamp": _at(2),
        "resultDisplay": diff,
    }
    with path.open("ab") as file:
        file.write(_message("m1", 1, ["Planning", "Checking"], toolCalls=[call]))
        file.write(_message("m1", 1, ["Planning", "Checking"], toolCalls=[call]))
    assert follower.poll() == [
        FileChanged(
            agent="gemini",
            session_id=SESSION,
            path=str(workspace / "notes.txt"),
            change="created",
            call_id="write_file_1",
            derived=False,
            origin="session_file",
        )
    ]
    assert follower.context == ("gemini-2.5-flash", 120)


def test_estimates_on_turn_completed(tmp_path: Path) -> None:
    counts = ModelUsage(input_tokens=1000, output_tokens=100, cached_tokens=0, total_tokens=1150)
    usage = TokenUsage(
        input_tokens=1000,
        output_tokens=100,
        cached_tokens=0,
        total_tokens=1150,
        by_model={"gemini-2.5-flash": counts},
    )
    turn = TurnCompleted(agent="gemini", ok=True, stop_reason="end_turn", answer="", usage=usage)
    priced = with_estimates(turn, None)
    assert priced.usage is not None
    # 1000 in at 0.30, 100 out and 50 thoughts at 2.50 (USD per million), from prices.json.
    assert priced.usage.cost_usd == (1000 * 0.3 + 150 * 2.5) / 1e6
    assert priced.usage.context_tokens is msgspec.UNSET
    unknown = msgspec.structs.replace(usage, by_model={"gemini-9": counts})
    plain = msgspec.structs.replace(turn, usage=unknown)
    assert with_estimates(plain, None) == plain
    home, workspace, _ = _home(tmp_path)
    follower = SessionFollower(str(home), str(workspace), lambda: None, NOW)
    follower.context = ("gemini-2.5-flash", 900)
    followed = with_estimates(turn, follower).usage
    assert followed is not None
    assert (followed.context_tokens, followed.context_window) == (900, 1048576)


def test_the_exact_change_takes_the_place_of_the_derived_one() -> None:
    def change(call: str | None, kind: str, exact: bool) -> FileChanged:
        return FileChanged(
            agent="gemini",
            path=f"/w/{call}",
            change=kind,  # type: ignore[arg-type]
            call_id=call,
            derived=not exact,
            origin="session_file" if exact else msgspec.UNSET,
        )

    derived_a, exact_a = change("a", "written", False), change("a", "created", True)
    derived_b, unknown = change("b", "written", False), change(None, "written", False)
    exact_c = change("c", "modified", True)
    thought = ThoughtDelta(agent="gemini", text="hm")
    events: list[Event] = [derived_a, thought, derived_b, exact_a, unknown, exact_c]
    assert files_changed(events) == [exact_a, derived_b, unknown, exact_c]


def test_a_message_holding_half_an_emoji_still_gives_its_thoughts(tmp_path: Path) -> None:
    home, workspace, path = _home(tmp_path)
    follower = SessionFollower(str(home), str(workspace), lambda: SESSION, NOW)
    header = {"sessionId": SESSION, "projectHash": "x", "startTime": _at(0), "kind": "main"}
    cut = _message("m1", 1, ["Cut \ud83d"])  # json.dumps escapes it as Node does
    assert b"\\ud83d" in cut
    path.write_bytes(json.dumps(header).encode() + b"\n" + cut)
    assert follower.poll() == [
        Notice(
            agent="gemini",
            session_id=SESSION,
            severity="warning",
            message="replaced 2 lone UTF-16 surrogate(s) in the agent's output with U+FFFD"
            " (half of a character, e.g. an emoji cut in two)",
            source="gemwire",
        ),
        ThoughtDelta(
            agent="gemini",
            session_id=SESSION,
            text="**Cut \ufffd**\n\nabout Cut \ufffd",
            origin="session_file",
        ),
    ]


def test_half_an_emoji_outside_the_thoughts_is_left_for_the_stream_to_say(
    tmp_path: Path,
) -> None:
    home, workspace, path = _home(tmp_path)
    follower = SessionFollower(str(home), str(workspace), lambda: SESSION, NOW)
    cut = _message("m1", 1, ["Plan"], content="big \ud83d")  # the stream has this text too
    path.write_bytes(cut)
    assert follower.poll() == [
        ThoughtDelta(
            agent="gemini", session_id=SESSION, text="**Plan**\n\nabout Plan", origin="session_file"
        )
    ]
