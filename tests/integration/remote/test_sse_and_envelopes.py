"""The sans-IO parts of gemwire.remote: envelopes from JSON, and a session's stream read
with `protocol.sse.SseDecoder` (its own tests: tests/unit/protocol/test_sse.py)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import AsyncIterator

import anyio
import httpx
import msgspec
import pytest
from hypothesis import given, strategies as st

from gemwire.errors import RemoteError
from gemwire.events import MessageDelta, Notice, TurnCompleted
from gemwire.remote.api import ApiClient, Reconnect
from gemwire.remote.models import Envelope, decode_envelope


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


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = iter(chunks)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            raise StopAsyncIteration from None


@given(
    texts=st.lists(st.text(), min_size=1, max_size=8),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
    line_end=st.sampled_from(["\n", "\r\n"]),
)
def test_envelopes_come_whole_and_once_in_any_chunking(
    texts: list[str], cuts: list[int], line_end: str
) -> None:
    events = [MessageDelta(agent="a", text=text) for text in texts]
    body = f": keep-alive{line_end}{line_end}"
    for seq, event in enumerate(events, 1):
        data = msgspec.json.encode({"seq": seq, "event": event}).decode()
        body += line_end.join([f"id: {seq}", "event: gemwire", f"data: {data}", "", ""])
    raw = body.encode()
    points = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    chunks = [raw[a:b] for a, b in itertools.pairwise(points)]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Chunks(chunks))

    taken: list[Envelope] = []

    async def take(envelope: Envelope) -> bool:
        taken.append(envelope)
        return envelope.seq == len(events)

    async def follow() -> int:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            return await ApiClient(http, Reconnect()).follow("http://x/events", 0, take)

    assert anyio.run(follow) == len(events)
    assert taken == [Envelope(seq=n, event=e) for n, e in enumerate(events, 1)]


async def follow_stream(chunks: list[bytes], max_event_bytes: int) -> list[Envelope]:
    taken: list[Envelope] = []

    async def take(envelope: Envelope) -> bool:
        taken.append(envelope)
        return False

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Chunks(chunks))

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        api = ApiClient(http, Reconnect(attempts=0), max_event_bytes=max_event_bytes)
        await api.follow("http://x/events", 0, take)
    return taken


@pytest.mark.anyio
@pytest.mark.parametrize("ends", [True, False])
async def test_a_message_over_the_cap_is_never_held_and_is_a_typed_error(ends: bool) -> None:
    # It was held whole, however long: a line that never ended grew to 196 MB.
    first = b'id: 1\nevent: gemwire\ndata: {"seq": 1, "state": {}}\n\n'
    huge = [b"event: gemwire\ndata: "] + [b"x" * 65536] * 64  # 4 MiB, cap 1 MiB
    rest = [b"\n\nid: 3\nevent: gemwire\ndata: {}\n\n"] if ends else []
    with pytest.raises(RemoteError) as refused:
        await follow_stream([first, *huge, *rest], max_event_bytes=1 << 20)
    assert refused.value.kind == "too_large"
    assert str(refused.value) == (
        "GET http://x/events: a stream message of 4194310 bytes is over the 1048576-byte limit"
    )
