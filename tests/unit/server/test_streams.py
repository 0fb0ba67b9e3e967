"""Envelopes to subscribers: from the log, then live, each exactly once; bounded buffers."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any, Self

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from gemwire.server import store
from gemwire.server.store import INDEX_EVERY, EventLog
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


class ReadCounter:
    """`store`'s ``open``, counting the bytes read through it."""

    def __init__(self) -> None:
        self.bytes = 0

    def open(self, path: str, mode: str = "r") -> Any:
        counter = self
        file = builtins.open(path, mode)  # noqa: SIM115 - the wrapper closes it

        class Counted:
            def read(self, size: int = -1) -> bytes:
                data: bytes = file.read(size)
                counter.bytes += len(data)
                return data

            def __getattr__(self, name: str) -> Any:
                return getattr(file, name)

            def __enter__(self) -> Self:
                return self

            def __exit__(self, *exc_info: object) -> None:
                file.close()

        return Counted()


async def test_catching_up_on_a_long_log_reads_it_about_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = EventLog(str(tmp_path / "events.jsonl"))
    stream = EventStream(log)
    total = 30 * LOG_BATCH
    for seq in range(1, total + 1):
        publish(log, stream, seq)
    size = (tmp_path / "events.jsonl").stat().st_size
    counter = ReadCounter()
    monkeypatch.setattr(store, "open", counter.open, raising=False)
    assert await take_all(stream, stream.subscribe(0)) == list(range(1, total + 1))
    # Each batch starts at most INDEX_EVERY lines before it and reads a chunk past it.
    batches = total // LOG_BATCH
    assert counter.bytes <= size + batches * (INDEX_EVERY * len(envelope(total)) + (1 << 16))
    # From the middle: the lines before the nearest kept offset are not read.
    counter.bytes = 0
    assert [seq for seq, _ in log.read(after=total - 10)] == list(range(total - 9, total + 1))
    assert counter.bytes <= INDEX_EVERY * len(envelope(total))


async def test_a_read_stops_at_its_byte_cap_but_gives_at_least_one(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path / "events.jsonl"))
    big = b'{"seq":%d,"state":{"status":"idle","detail":"' + b"x" * 1000 + b'"}}'
    for seq in range(1, 11):
        log.append(seq, big % seq)
    assert [seq for seq, _ in log.read(after=0, max_bytes=3500)] == [1, 2, 3]
    assert [seq for seq, _ in log.read(after=3, max_bytes=10)] == [4]
    log.close()


def test_a_log_opened_again_keeps_its_index(tmp_path: Path) -> None:
    path = str(tmp_path / "events.jsonl")
    log = EventLog(path)
    for seq in range(1, 1001):
        log.append(seq, envelope(seq))
    log.close()
    again = EventLog(path)
    assert again.last_seq == 1000
    assert [seq for seq, _ in again.read(after=700, limit=3)] == [701, 702, 703]
    again.append(1001, envelope(1001))
    assert [seq for seq, _ in again.read(after=999)] == [1000, 1001]
    again.close()


async def test_a_poke_ends_a_wait_with_none_and_envelopes_come_first(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path / "events.jsonl"))
    stream = EventStream(log)
    subscription = stream.subscribe(0)
    publish(log, stream, 1)
    assert [seq for seq, _ in await subscription.next_batch()] == [1]
    async with anyio.create_task_group() as tg:
        got: list[Any] = []

        async def wait() -> None:
            got.append(await subscription.next_or_idle())

        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert got == []  # waiting: nothing came, no poke yet
        subscription.poke()
    assert got == [None]  # a keep-alive is due
    subscription.poke()
    publish(log, stream, 2)
    assert await subscription.next_or_idle() == [(2, envelope(2))]  # envelopes win
    publish(log, stream, 3)  # the poke was used up by the envelopes given
    assert await subscription.next_or_idle() == [(3, envelope(3))]
    async with anyio.create_task_group() as tg:
        batches: list[Any] = []

        async def batch() -> None:
            batches.append(await subscription.next_batch())

        tg.start_soon(batch)
        await anyio.wait_all_tasks_blocked()
        subscription.poke()
        await anyio.wait_all_tasks_blocked()
        assert batches == []  # next_batch waits on through a poke
        publish(log, stream, 4)
    assert [[seq for seq, _ in each] for each in batches] == [[4]]
    assert await take_all(stream, subscription) == []
