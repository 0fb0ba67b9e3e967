"""Every Gemini decoder, fed mutated real recordings (see tests/kit/hostile.py): no exception but
gemwire's typed ones, exactly one ``turn_completed`` (last) where a run is replayed, bounded
time, and what a person or a program is shown of it (``--json``, the transcript) never fails.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st
from kit.corpus import RECORDINGS
from kit.hostile import chunks, mutated, recording, within
from rich.console import Console

from gemwire import replay_gemini_stream
from gemwire.cli.safe_text import terminal_safe_event
from gemwire.cli.transcript import Transcript
from gemwire.cli.view import View
from gemwire.errors import GemwireError
from gemwire.events import Event, Notice, SessionStarted, TurnCompleted, encode_event
from gemwire.protocol.gemini_json import ErrorDocumentScanner, decode_json_output
from gemwire.sessions import read_session_info, to_unified_messages
from gemwire.sessions.gemini import load_session

# tests/kit/hostile.py: tests/ is on sys.path through tests/conftest.py (rootdir-based import).
STREAMS = list(RECORDINGS.glob("*/*/stream-json/run-*.stdout"))
DOCUMENTS = list(RECORDINGS.glob("*/*/json/run-*.stdout"))
STDERRS = list(RECORDINGS.glob("*/*/json/run-*.stderr"))
SESSIONS = [p for p in RECORDINGS.glob("*/*/*/gemini-home/tmp/*/chats/**/*.json*") if p.is_file()]
SECONDS = 30  # per example; a real one takes well under a second

fuzz = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def shown(events: list[Event]) -> None:
    """Everything the command line would do with the events: JSON lines, a transcript, and
    the live view's blocks rendered on a (captured) terminal."""
    transcript = Transcript(io.StringIO())
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    view = View(verbose=True)
    for event in events:
        encode_event(event)
        safe = terminal_safe_event(event)
        transcript.write(safe)
        for block in view.apply(safe):
            console.print(block)
    console.print(view.moving())
    for block in view.close():
        console.print(block)


def assert_one_turn(events: list[Event]) -> None:
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    assert isinstance(events[-1], TurnCompleted)


@fuzz
@given(recording(STREAMS).flatmap(mutated), st.integers(1, 1 << 16), st.booleans())
def test_stream_json(data: bytes, size: int, strict: bool) -> None:
    with within(SECONDS):
        try:
            events = list(replay_gemini_stream(chunks(data, size), strict=strict))
        except GemwireError:
            assert strict  # lenient decoding never raises
            return
        assert_one_turn(events)
        shown(events)


@fuzz
@given(recording(DOCUMENTS).flatmap(mutated), st.integers(1, 1 << 16))
def test_json_output(data: bytes, size: int) -> None:
    with within(SECONDS):
        decode_json_output(data)
        with contextlib.suppress(GemwireError):
            decode_json_output(data, strict=True)
        events = list(replay_gemini_stream(chunks(data, size)))
        assert_one_turn(events)
        shown(events)


@fuzz
@given(recording(STDERRS).flatmap(mutated))
def test_error_documents_on_stderr(data: bytes) -> None:
    scanner = ErrorDocumentScanner()
    with within(SECONDS):
        for line in data.decode(errors="replace").split("\n"):
            scanner.feed_line(line)


@fuzz
@given(st.sampled_from(sorted(SESSIONS)).flatmap(lambda p: mutated(p.read_bytes())), st.booleans())
def test_session_files(data: bytes, legacy: bool) -> None:
    with tempfile.TemporaryDirectory() as folder, within(SECONDS):
        path = Path(folder) / ("session.json" if legacy else "session.jsonl")
        path.write_bytes(data)
        conversation = load_session(path, keep_originals=True)
        events = list(conversation.events())
        assert isinstance(events[0], SessionStarted)
        shown(events)
        list(to_unified_messages(conversation.messages, conversation.originals))
        info = read_session_info(path)
        assert info.messages == len(conversation.messages)


# Where a string value that is not empty starts: half an emoji goes there, as Gemini CLI
# writes it when it cuts a long text in the middle of one (issue 22, item 5).
_STRING_VALUE = re.compile(
    rb'(?<!\\)"(?:content|output|text|response|message|description)": ?"(?!")'
)
_REPAIRED = "replaced 1 lone UTF-16 surrogate(s)"
WITH_TEXT = [p for p in STREAMS + DOCUMENTS + SESSIONS if _STRING_VALUE.search(p.read_bytes())]


@st.composite
def half_an_emoji(draw: st.DrawFn, data: bytes) -> tuple[bytes, bytes]:
    """``data``, and ``data`` with a lone surrogate escape at the start of one string value."""
    starts = [m.end() for m in _STRING_VALUE.finditer(data)]
    at = draw(st.sampled_from(starts))
    return data, data[:at] + draw(st.sampled_from((b"\\ud83d", b"\\uDE00"))) + data[at:]


def _repair_notice(event: Event) -> bool:
    return isinstance(event, Notice) and event.message.startswith(_REPAIRED)


@fuzz
@given(recording([p for p in WITH_TEXT if p.suffix == ".stdout"]).flatmap(half_an_emoji))
def test_half_an_emoji_in_any_string_loses_nothing(pair: tuple[bytes, bytes]) -> None:
    data, cut = pair
    before = list(replay_gemini_stream([data]))
    after = list(replay_gemini_stream([cut]))
    assert sum(map(_repair_notice, after)) == 1
    assert [e.type for e in after if not _repair_notice(e)] == [e.type for e in before]
    first, last = before[-1], after[-1]
    assert isinstance(first, TurnCompleted)
    assert isinstance(last, TurnCompleted)
    assert last.answer.count("\ufffd") - first.answer.count("\ufffd") in (0, 1)


@fuzz
@given(st.sampled_from([p for p in WITH_TEXT if p.suffix != ".stdout"]), st.data())
def test_half_an_emoji_in_a_session_file_keeps_every_message(
    recorded: Path, draw: st.DataObject
) -> None:
    data, cut = draw.draw(half_an_emoji(recorded.read_bytes()))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"session{recorded.suffix}"
        path.write_bytes(data)
        before = load_session(path)
        path.write_bytes(cut)
        after = load_session(path)
        assert len(after.messages) == len(before.messages)
        [problem] = [p.message for p in after.problems if p not in before.problems]
        assert problem.startswith(_REPAIRED)
