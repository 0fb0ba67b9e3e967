"""The sans-IO parts of gemwire.remote: SSE messages from lines, envelopes from JSON."""

from __future__ import annotations

import subprocess
import sys

import msgspec
import pytest
from hypothesis import given, strategies as st

from gemwire.events import MessageDelta, Notice, TurnCompleted
from gemwire.remote.models import Envelope, decode_envelope
from gemwire.remote.sse import SseMessage, SseParser


def parse(text: str) -> list[SseMessage]:
    parser = SseParser()
    lines = text.replace("\r\n", "\n").split("\n")
    return [m for line in lines if (m := parser.feed(line)) is not None]


def test_fields_comments_and_multiline_data() -> None:
    text = (
        ": keep-alive\n\n"
        "id: 1\nevent: gemwire\ndata: a\ndata:b\n\n"
        "data: plain\n\n"
        "retry: 10\nevent: x\n\n"  # no data: nothing dispatched
        "id: 2\nfoo: bar\nevent: gemwire\ndata:  two spaces\n\n"
        "data: torn"  # no blank line yet: not a message
    )
    assert parse(text) == [
        SseMessage(id="1", event="gemwire", data="a\nb"),
        SseMessage(id="1", event="message", data="plain"),
        SseMessage(id="2", event="gemwire", data=" two spaces"),
    ]


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n")), max_size=5))
def test_any_data_lines_come_back_joined(datas: list[str]) -> None:
    text = "".join(f"data: {d}\n" for d in datas) + "\n"
    expected = [SseMessage(id=None, event="message", data="\n".join(datas))] if datas else []
    assert parse(text) == expected


def test_an_envelope_decodes_its_event_and_state() -> None:
    assert decode_envelope(b'{"seq": 2, "state": {"status": "running"}}') == Envelope(
        seq=2, state={"status": "running"}
    )
    event = {"type": "turn_completed", "agent": "acp:x", "ok": True, "stop_reason": "end_turn"}
    envelope = decode_envelope(msgspec.json.encode({"seq": 9, "event": {**event, "answer": "4"}}))
    assert envelope == Envelope(
        seq=9, event=TurnCompleted(agent="acp:x", ok=True, stop_reason="end_turn", answer="4")
    )
    delta = decode_envelope(
        '{"seq": 1, "event": {"type": "message_delta", "agent": "a", "text": ""}}'
    )
    assert delta.event == MessageDelta(agent="a", text="")


def test_an_unknown_event_type_is_a_notice_in_its_place() -> None:
    data = '{"seq": 5, "event": {"type": "hologram", "agent": "acp:x", "session_id": "s1"}}'
    assert decode_envelope(data) == Envelope(
        seq=5,
        event=Notice(
            agent="acp:x",
            session_id="s1",
            severity="warning",
            source="gemwire",
            message="the server sent an event gemwire does not know ('hologram'); skipped",
        ),
    )


@pytest.mark.parametrize("data", ["", "[]", '{"event": {}}', '{"seq": "x"}', "{"])
def test_what_is_no_envelope_raises_decode_error(data: str) -> None:
    with pytest.raises(msgspec.DecodeError):
        decode_envelope(data)


def test_without_the_extra_the_import_says_what_to_install() -> None:
    code = "import sys; sys.modules['httpx'] = None; import gemwire.remote"
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ImportError: gemwire.remote needs the [remote] extra: pip install 'gemwire[remote]'"
    )
