"""Envelopes to subscribers: from the log, then live, each exactly once; bounded buffers."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from gemwire.server.store import EventLog
from gemwire.server.streams import LOG_BATCH, SUBSCRIBER_BUFFER, EventStream, Subscription

pytestmark = pytest.mark.anyio


def envelope(seq: int) -> bytes:
    return b'{"seq":%d,"state":{"status":"idle"}}' % seq


def publish(log: EventLog, stream: EventStream, seq: int) -> None:
    log.append(seq, envelope(seq))
    stream.publish(seq, envelope(seq))


async def take_all(stream: EventStream, subscription: Subscription) -> list[int]:
    stream.close()
    stream.log.close()
    seqs: list[int] = []
    while batch := await subscription.next_batch():
        seqs += [seq for seq, _ in batch]
    return seqs


async def test_a_subscriber_that_never_reads_holds_a_bounded_buffer(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path / "events.jsonl"))
    stream = EventStream(log)
    subscription = stream.subscribe(0)
    publish(log, stream, 1)
    assert [seq for seq, _ in await subscription.next_batch()] == [1]  # now following live
    most = 0
    for seq in range(2, 5001):
        publish(log, stream, seq)
        most = max(most, subscription.buffered)
    assert most == SUBSCRIBER_BUFFER
    # It fell behind: it reads on from the log, every envelope exactly once, in order.
    assert await take_all(stream, subscription) == list(range(2, 5001))


async def test_a_late_subscriber_reads_the_log_in_batches_then_live(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path / "events.jsonl"))
    stream = EventStream(log)
    for seq in range(1, 2501):
        publish(log, stream, seq)
    subscription = stream.subscribe(after=7)
    first = await subscription.next_batch()
    assert [seq for seq, _ in first] == list(range(8, 8 + LOG_BATCH))
    publish(log, stream, 2501)
    assert await take_all(stream, subscription) == list(range(8 + LOG_BATCH, 2502))


@settings(max_examples=60, deadline=None)
@given(
    after=st.integers(0, 30),
    steps=st.lists(st.sampled_from(["publish", "read"]), max_size=80),
    before=st.integers(0, 30),
)
def test_any_interleaving_gives_every_seq_after_n_exactly_once(
    tmp_path_factory: pytest.TempPathFactory, after: int, steps: list[str], before: int
) -> None:
    async def main() -> list[int]:
        log = EventLog(str(tmp_path_factory.mktemp("log") / "events.jsonl"))
        stream = EventStream(log)
        seq = 0
        for _ in range(before):
            seq += 1
            publish(log, stream, seq)
        subscription = stream.subscribe(after)
        got: list[int] = []
        for step in steps:
            if step == "publish":
                seq += 1
                publish(log, stream, seq)
            else:
                with anyio.move_on_after(0):
                    got += [s for s, _ in await subscription.next_batch()]
        return got + await take_all(stream, subscription)

    assert anyio.run(main) == list(range(after + 1, before + steps.count("publish") + 1))


def test_a_torn_last_line_is_cut_off_when_the_log_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(envelope(1) + b"\n" + envelope(2) + b"\n" + b'{"seq":3,"ev')
    log = EventLog(str(path))
    assert (log.torn, log.last_seq) == (True, 2)
    assert path.read_bytes() == envelope(1) + b"\n" + envelope(2) + b"\n"
    log.append(3, envelope(3))
    assert [seq for seq, _ in log.read()] == [1, 2, 3]
    log.close()
