from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.corpus import RECORDINGS, normalize_stream

from gemwire import replay_gemini_stream
from gemwire._normalize.gemini import _HANDLERS, GeminiNormalizer
from gemwire._normalize.gemini_errors import error_kind_for_exit_code
from gemwire.events import (
    Event,
    FileChanged,
    Notice,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    TurnError,
    Unknown,
)
from gemwire.protocol.gemini import DecodedItem, GeminiStreamDecoder
from gemwire.wire.gemini_stream import ToolUseEvent

STREAMS = sorted(RECORDINGS.glob("*/*/stream-json/run-*.stdout"))

INIT = '{"type":"init","timestamp":"t","session_id":"s1","model":"auto"}'
USE = '{"type":"tool_use","timestamp":"t","tool_name":"%s","tool_id":"%s","parameters":%s}'
RESULT_OK = '{"type":"tool_result","timestamp":"t","tool_id":"%s","status":"success"}'
DELTA = '{"type":"message","timestamp":"t","role":"assistant","content":"%s","delta":true}'
STATS = '{"total_tokens":3,"input_tokens":2,"output_tokens":1,"duration_ms":%d,"tool_calls":0}'


def run(*lines: str, exit_code: int | None = None, cwd: str | None = "/ws") -> list[Event]:
    return normalize_stream("\n".join(lines).encode(), cwd=cwd, exit_code=exit_code)


def completed(events: list[Event]) -> TurnCompleted:
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(turns) == 1
    return turns[0]


def test_results_in_any_order_and_several_in_flight() -> None:
    events = run(
        INIT,
        USE % ("read_file", "a", '{"file_path":"a.txt"}'),
        USE % ("read_file", "b", '{"file_path":"b.txt"}'),
        RESULT_OK % "b",
        RESULT_OK % "a",
        '{"type":"result","timestamp":"t","status":"success","stats":%s}' % (STATS % 7),
    )
    assert [(type(e).__name__, getattr(e, "call_id", None)) for e in events][:5] == [
        ("SessionStarted", None),
        ("ToolCallStarted", "a"),
        ("ToolCallStarted", "b"),
        ("ToolCallFinished", "b"),
        ("ToolCallFinished", "a"),
    ]
    assert all(e.session_id == "s1" for e in events)
    assert completed(events).duration_ms == 7


def test_a_result_for_an_unknown_call_is_reported_not_invented() -> None:
    events = run(INIT, RESULT_OK % "ghost")
    assert events[1] == Notice(
        agent="gemini",
        session_id="s1",
        severity="warning",
        message="tool result for unknown call 'ghost' (success)",
        source="gemwire",
    )
    assert not any(isinstance(e, ToolCallFinished) for e in events)


def test_a_call_that_never_finishes_is_cancelled_at_the_end() -> None:
    events = run(INIT, USE % ("run_shell_command", "c1", '{"command":"sleep 600"}'))
    assert events[-3:] == [
        Notice(
            agent="gemini",
            session_id="s1",
            severity="warning",
            message="run_shell_command call 'c1' never reported a result",
            source="gemwire",
        ),
        ToolCallFinished(agent="gemini", session_id="s1", call_id="c1", status="cancelled"),
        TurnCompleted(
            agent="gemini",
            session_id="s1",
            ok=False,
            stop_reason="error",
            error=TurnError(kind="protocol", message="the stream ended without a result"),
            answer="",
        ),
    ]


@pytest.mark.parametrize(
    ("exit_code", "kind"),
    [
        (0, "crashed"),
        (-15, "crashed"),
        (1, "agent"),
        (41, "auth"),
        (42, "input"),
        (53, "turn_limit"),
        (55, "untrusted"),
        (130, "cancelled"),
        (144, "api"),
        (173, "rate_limited"),
        (244, "api"),
    ],
)
def test_the_exit_code_names_the_failure_when_there_was_no_result(
    exit_code: int, kind: str
) -> None:
    turn = completed(run(INIT, DELTA % "partial", exit_code=exit_code))
    assert (turn.ok, turn.answer, turn.error) == (
        False,
        "partial",
        TurnError(
            kind=kind,
            message="the agent exited without a result"
            if exit_code == 0
            else f"the agent exited with code {exit_code} without a result",
            exit_code=exit_code,
        ),
    )
    if exit_code != 0:  # exit 0 without a result is decided by finish(), not the table
        assert error_kind_for_exit_code(exit_code) == kind


def test_a_second_result_is_a_notice_and_the_first_stands() -> None:
    first = '{"type":"result","timestamp":"t","status":"success","stats":%s}' % (STATS % 1)
    second = '{"type":"result","timestamp":"t","status":"error","error":{"type":"x","message":"y"}}'
    events = run(INIT, first, DELTA % "late", second)
    assert completed(events).ok
    assert events[-1] == Notice(
        agent="gemini",
        session_id="s1",
        severity="warning",
        message="ignored a second result (error); the first one stands",
        source="gemwire",
    )


def test_replace_with_empty_old_string_creates_and_write_file_says_written() -> None:
    events = run(
        INIT,
        USE % ("replace", "r", '{"file_path":"new.py","old_string":"","new_string":"x"}'),
        RESULT_OK % "r",
        USE % ("write_file", "w", '{"file_path":"/abs/f.txt","content":"x"}'),
        RESULT_OK % "w",
    )
    changes = [(e.path, e.change, e.derived) for e in events if isinstance(e, FileChanged)]
    assert changes == [("/ws/new.py", "created", True), ("/abs/f.txt", "written", True)]


def test_unknown_events_are_kept_raw() -> None:
    events = run(INIT, '{"type":"telemetry","timestamp":"t"}')
    assert events[1] == Unknown(
        agent="gemini",
        session_id="s1",
        upstream_type="telemetry",
        raw='{"type":"telemetry","timestamp":"t"}',
    )


def test_text_after_tool_calls_is_a_new_paragraph_of_the_answer() -> None:
    events = run(
        INIT,
        DELTA % "Reading.",
        USE % ("glob", "g", '{"pattern":"*"}'),
        RESULT_OK % "g",
        DELTA % "Found ",
        DELTA % "it.",
    )
    assert completed(events).answer == "Reading.\n\nFound it."


def check_invariants(events: list[Event]) -> None:
    completed(events)
    started: set[str] = set()
    finished: set[str] = set()
    for event in events:
        if isinstance(event, ToolCallStarted):
            started.add(event.call_id)
        elif isinstance(event, ToolCallFinished):
            assert event.call_id in started, "finished before it started"
            assert event.call_id not in finished, "finished twice"
            finished.add(event.call_id)
    assert finished == started


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0, max_value=len(STREAMS) - 1),
    fraction=st.floats(min_value=0, max_value=1),
)
def test_a_fixture_cut_at_any_byte_still_ends_in_exactly_one_turn(
    index: int, fraction: float
) -> None:
    data = STREAMS[index].read_bytes()
    check_invariants(normalize_stream(data[: int(len(data) * fraction)]))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_end_in_exactly_one_turn(data: bytes) -> None:
    check_invariants(normalize_stream(data, max_line_bytes=128))


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.stem}")
def test_every_recording_keeps_the_invariants(stream: Path) -> None:
    check_invariants(normalize_stream(stream.read_bytes(), strict=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0, max_value=len(STREAMS) - 1),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20),
)
def test_any_chunking_of_any_fixture_yields_identical_events(index: int, cuts: list[int]) -> None:
    data = STREAMS[index].read_bytes()
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert list(replay_gemini_stream(chunks)) == list(replay_gemini_stream([data]))


def test_the_0_15_prompt_flag_deprecation_is_a_notice_not_answer_text() -> None:
    text = (
        "The --prompt (-p) flag has been deprecated and will be removed in a future version. "
        "Please use a positional argument for your prompt. See gemini --help for more information.\\n"
    )
    events = run(
        INIT,
        DELTA % text,
        DELTA % "It was 7.",
        '{"type":"result","timestamp":"t","status":"success"}',
    )
    assert events[1] == Notice(
        agent="gemini", session_id="s1", severity="warning", message=text[:-2], source="upstream"
    )
    assert completed(events).answer == "It was 7."


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.stem}")
def test_feeding_a_batch_is_feeding_each_item(stream: Path) -> None:
    decoder = GeminiStreamDecoder(strict=True)
    items = decoder.feed(stream.read_bytes()) + decoder.close()
    one_by_one, batched = GeminiNormalizer(cwd="/ws"), GeminiNormalizer(cwd="/ws")
    expected = [e for item in items for e in one_by_one.feed(item)]
    assert batched.feed_all(items) == expected
    assert batched.finish() == one_by_one.finish()


def test_every_decoded_item_type_has_a_handler_and_nothing_else_is_taken() -> None:
    # tool_use lines are handled in feed_all itself, the rest through the table.
    assert set(_HANDLERS) == set(get_args(DecodedItem)) - {ToolUseEvent}
    with pytest.raises(TypeError, match="not a decoded Gemini stream item: 'text'"):
        GeminiNormalizer().feed("text")  # type: ignore[arg-type]


RESULT_ERROR = '{"type":"result","timestamp":"t","status":"error","stats":%s}' % (STATS % 7105)


def test_an_error_result_without_an_error_object_fails_with_the_error_line_before_it() -> None:
    why = '{"type":"error","timestamp":"t","severity":"error","message":"empty response"}'
    turn = completed(run(INIT, why, RESULT_ERROR))
    assert (turn.ok, turn.stop_reason, turn.error, turn.duration_ms) == (
        False,
        "error",
        TurnError(kind="api", message="empty response"),
        7105,
    )


def test_an_error_result_with_no_reason_at_all_still_fails_and_says_so() -> None:
    turn = completed(run(INIT, RESULT_ERROR))
    assert (turn.ok, turn.error) == (
        False,
        TurnError(
            kind="agent",
            message="Gemini CLI ended the run with status error and said nothing of why "
            "(no error line came before its result)",
        ),
    )


def test_the_experimental_path_gives_write_file_a_diff_from_its_display() -> None:
    stream = RECORDINGS / "0.61.0" / "exp_agent_tool_calls" / "stream-json" / "run-1.stdout"
    events = normalize_stream(stream.read_bytes(), cwd="__WORKSPACE__", strict=True)
    write = next(e for e in events if isinstance(e, ToolCallFinished))
    assert write.output == write.diff
    assert write.diff is not None
    assert write.diff.splitlines()[-2:] == ["@@ -0,0 +1,1 @@", "+hi there"]
    [changed] = [e for e in events if isinstance(e, FileChanged)]
    assert (changed.path, changed.change, changed.call_id) == (
        "__WORKSPACE__/hello.txt",
        "written",
        write.call_id,
    )
