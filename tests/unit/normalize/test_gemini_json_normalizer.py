"""The json format, normalized: every recorded document ends the way its stream-json twin did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from kit.corpus import RECORDINGS, normalize_stream

from gemwire._normalize.gemini_json import GeminiJsonNormalizer, json_error_kind
from gemwire.events import Event, MessageDelta, Notice, SessionStarted, TurnCompleted, TurnError
from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.gemini_json import ErrorDocumentScanner, JsonOutputDecoder
from gemwire.wire.gemini_json import JsonError, JsonOutput

RUNS = sorted(RECORDINGS.glob("*/*/json/run-*.stdout"))


def exit_code_of(stdout: Path) -> int:
    meta = json.loads((stdout.parents[1] / "meta.json").read_text())
    n = int(stdout.stem.removeprefix("run-"))
    return int(meta["formats"][stdout.parts[-2]]["runs"][n - 1]["exit_code"])


def normalize_json(stdout: Path) -> list[Event]:
    normalizer, scanner, events = GeminiJsonNormalizer(), ErrorDocumentScanner(), []
    for line in stdout.with_suffix(".stderr").read_text().split("\n"):
        document = scanner.feed_line(line)
        if document is not None:
            events += normalizer.error_document(document)
    decoder = JsonOutputDecoder(strict=True)
    decoder.feed(stdout.read_bytes())
    return events + normalizer.finish(decoder.close(), exit_code=exit_code_of(stdout))


def stream_turn(stdout: Path) -> TurnCompleted:
    turn = normalize_stream(stdout.read_bytes(), exit_code=exit_code_of(stdout))[-1]
    assert isinstance(turn, TurnCompleted)
    return turn


@pytest.mark.parametrize("run", RUNS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.stem}")
def test_json_run_ends_like_its_stream_json_twin(run: Path) -> None:
    events = normalize_json(run)
    turn = events[-1]
    assert isinstance(turn, TurnCompleted)
    assert [e for e in events if isinstance(e, TurnCompleted)] == [turn]
    twin = stream_turn(run.parents[1] / "stream-json" / run.name)
    assert (turn.ok, turn.stop_reason) == (twin.ok, twin.stop_reason)
    if turn.error is None:
        assert twin.error is None
    else:
        assert twin.error is not None
        assert turn.error.kind == twin.error.kind
        assert turn.error.exit_code == exit_code_of(run)
    # json keeps only the last model turn's text; normalized stream-json keeps all of it.
    assert twin.answer.endswith(turn.answer)
    assert [e.text for e in events if isinstance(e, MessageDelta)] == (
        [turn.answer] if turn.answer else []
    )
    if turn.usage is not None and twin.usage is not None:
        assert (turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.total_tokens) == (
            twin.usage.input_tokens,
            twin.usage.output_tokens,
            twin.usage.total_tokens,
        )
        if run.parts[-4] == "0.61.0":  # older stream-json has no per-model stats
            assert turn.usage == twin.usage


def by_case(version: str, case: str) -> list[Event]:
    return normalize_json(RECORDINGS / version / case / "json" / "run-1.stdout")


def test_a_fatal_error_printed_twice_on_stderr_counts_once() -> None:
    events = by_case("0.61.0", "max_session_turns")
    assert [e.type for e in events] == ["session_started", "turn_completed"]
    message = (
        "Reached max session turns for this session. Increase the number of turns by "
        "specifying maxSessionTurns in settings.json."
    )
    assert events[-1] == TurnCompleted(
        agent="gemini",
        session_id=events[0].session_id,
        ok=False,
        stop_reason="max_turn_requests",
        error=TurnError(kind="turn_limit", message=message, exit_code=53),
        answer="",
    )


def test_an_empty_model_response_exits_0_yet_fails() -> None:
    turn = by_case("0.61.0", "empty_response")[-1]
    assert isinstance(turn, TurnCompleted)
    message = (
        "The model returned an empty response with no text or thoughts. "
        "This may be a transient API issue; please try again."
    )
    assert (turn.ok, turn.error) == (False, TurnError(kind="api", message=message, exit_code=0))


def test_loop_detection_warning_is_a_notice_and_cuts_the_turn_short() -> None:
    events = by_case("0.61.0", "loop_detection")
    notices = [e for e in events if isinstance(e, Notice)]
    assert [(n.severity, n.source, n.message) for n in notices] == [
        ("warning", "upstream", "Loop detected, stopping execution")
    ]
    turn = events[-1]
    assert isinstance(turn, TurnCompleted)
    assert (turn.ok, turn.stop_reason, turn.error, turn.answer) == (
        True,
        "max_turn_requests",
        None,
        "",
    )


@pytest.mark.parametrize(
    ("error", "exit_code", "kind"),
    [
        (JsonError(type="FatalTurnLimitedError", message="m", code=53), 53, "turn_limit"),
        (JsonError(type="Error", message="m", code=429), 173, "rate_limited"),
        (JsonError(type="Error", message="m", code=401), 145, "auth"),
        (
            JsonError(type="Error", message='{"code":400,"API key not valid"}', code=400),
            144,
            "auth",
        ),
        (JsonError(type="Error", message="m", code=500), 244, "api"),
        (JsonError(type="Error", message="no key", code=41), 41, "auth"),
        (JsonError(type="Error", message="m"), 42, "input"),
        (JsonError(type="INVALID_STREAM", message="empty"), 0, "api"),
    ],
)
def test_json_error_kinds(error: JsonError, exit_code: int, kind: str) -> None:
    assert json_error_kind(error, exit_code) == kind


def test_nothing_at_all_is_a_missing_result() -> None:
    (turn,) = GeminiJsonNormalizer().finish(None, exit_code=41)
    assert turn == TurnCompleted(
        agent="gemini",
        ok=False,
        stop_reason="error",
        error=TurnError(
            kind="auth", message="the agent exited with code 41 without a result", exit_code=41
        ),
        answer="",
    )


def test_a_stop_by_the_caller_wins_over_the_document() -> None:
    events = GeminiJsonNormalizer().finish(
        JsonOutput(session_id="s", response="partial"),
        exit_code=-15,
        stopped=TurnError(kind="timeout", message="too slow"),
    )
    assert events == [
        SessionStarted(agent="gemini", session_id="s"),
        MessageDelta(agent="gemini", session_id="s", text="partial"),
        TurnCompleted(
            agent="gemini",
            session_id="s",
            ok=False,
            stop_reason="error",
            error=TurnError(kind="timeout", message="too slow", exit_code=-15),
            answer="partial",
        ),
    ]


def test_oversized_and_malformed_output() -> None:
    decoder = JsonOutputDecoder(max_bytes=10)
    decoder.feed(b"{" + b" " * 20)
    oversized = decoder.close()
    assert oversized == OversizedLine(size=21, limit=10)
    events = GeminiJsonNormalizer().finish(oversized, exit_code=0)
    assert [e.type for e in events] == ["notice", "turn_completed"]
    decoder = JsonOutputDecoder()
    decoder.feed(b'{"session_id": "s", "resp')
    events = GeminiJsonNormalizer().finish(decoder.close(), exit_code=0)
    assert [e.type for e in events] == ["unknown", "turn_completed"]
    turn = events[-1]
    assert isinstance(turn, TurnCompleted)
    assert turn.error == TurnError(
        kind="protocol", message="the output was not a json document", exit_code=0
    )


def test_an_unterminated_error_block_ends_without_a_document() -> None:
    scanner = ErrorDocumentScanner()
    assert [scanner.feed_line(line) for line in ["{", '  "session_id": "s"']] == [None, None]
    assert all(scanner.feed_line("x") is None for _ in range(20_000))
    assert scanner.feed_line("[ERROR] {") is None
    assert scanner.feed_line("}") == JsonOutput()


@given(st.binary(max_size=2000), st.integers(min_value=1, max_value=3000))
def test_arbitrary_output_always_ends_in_exactly_one_turn(data: bytes, limit: int) -> None:
    decoder = JsonOutputDecoder(max_bytes=limit)
    decoder.feed(data)
    scanner, normalizer = ErrorDocumentScanner(), GeminiJsonNormalizer()
    events: list[Event] = []
    for line in data.decode(errors="replace").split("\n"):
        document = scanner.feed_line(line)
        if document is not None:
            events += normalizer.error_document(document)
    events += normalizer.finish(decoder.close(), exit_code=0)
    assert [type(e) for e in events].count(TurnCompleted) == 1
    assert isinstance(events[-1], TurnCompleted)
