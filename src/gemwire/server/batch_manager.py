"""Every batch of the server (`BatchManager`): those its state folder holds, loaded at
start, and those it runs, in its task group; their progress followed by the routes."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Self

import anyio
import msgspec
from anyio import AsyncContextManagerMixin
from anyio.abc import TaskGroup

from gemwire.batch import BatchOptions
from gemwire.errors import GemwireError
from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.server.batches import BatchSpec, ServerBatch

__all__ = ("KEEP_ALIVE", "BatchManager")

log = logging.getLogger("gemwire.server")

_encode = msgspec.json.Encoder().encode


class BatchManager(AsyncContextManagerMixin):
    """Every batch of the server; runs them in its task group while entered."""

    def __init__(self, state_dir: str, shutting_down: anyio.Event) -> None:
        self.folder = Path(state_dir) / "batches"
        self._shutting_down = shutting_down
        self.batches: dict[str, ServerBatch] = {}
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        await anyio.to_thread.run_sync(self._load_all)
        async with anyio.create_task_group() as self._group:
            self._group.start_soon(self._stop_at_shutdown)
            try:
                yield self
            finally:
                self.stop_all()
                self._group.cancel_scope.cancel()
        self._group = None

    async def _stop_at_shutdown(self) -> None:
        await self._shutting_down.wait()
        self.stop_all()

    def stop_all(self) -> None:
        for batch in self.batches.values():
            batch.stop()

    def _load_all(self) -> None:
        try:
            entries = sorted(os.scandir(self.folder), key=lambda e: e.name)
        except FileNotFoundError:
            return
        decode = msgspec.json.Decoder(BatchSpec).decode
        for entry in entries:
            try:
                spec = decode((Path(entry.path) / "batch.json").read_bytes())
                batch = ServerBatch(spec, Path(entry.path))
                batch.load()
            except (OSError, GemwireError, msgspec.ValidationError, *UNDECODABLE) as exc:
                log.warning("batch %s is not listed: %s", entry.name, exc)
                continue
            self.batches[spec.id] = batch

    def get(self, batch_id: str) -> ServerBatch | None:
        return self.batches.get(batch_id)

    def by_output(self, output: str) -> ServerBatch | None:
        return next((b for b in self.batches.values() if b.spec.output == output), None)

    async def add(self, spec: BatchSpec) -> ServerBatch:
        """A batch made known (and kept in the state folder); not started."""
        folder = self.folder / spec.id

        def write() -> ServerBatch:
            folder.mkdir(parents=True, mode=0o700)
            (folder / "batch.json").write_bytes(_encode(spec))
            batch = ServerBatch(spec, folder)
            batch.load()
            return batch

        batch = await anyio.to_thread.run_sync(write)
        self.batches[spec.id] = batch
        return batch

    async def forget(self, batch: ServerBatch) -> None:
        self.batches.pop(batch.spec.id, None)

        def remove() -> None:
            for name in ("batch.json", "progress.jsonl"):
                with contextlib.suppress(FileNotFoundError):
                    (batch.folder / name).unlink()
            with contextlib.suppress(OSError):
                batch.folder.rmdir()

        await anyio.to_thread.run_sync(remove)

    async def start(self, batch: ServerBatch, options: BatchOptions) -> None:
        """Run ``batch`` in the manager's task group; returns once its output folder is
        open. Raises what stops it before that (`InvalidOptions`: the folder is in use;
        `BatchOutputError`: its ``results.jsonl`` is damaged; `InvalidTasks`)."""
        assert self._group is not None, "the manager is not running"
        await self._group.start(batch.run, options)
        if self._shutting_down.is_set():  # it began meanwhile: stopped as the others were
            batch.stop()

    async def follow(self, batch: ServerBatch, after: int) -> AsyncIterator[bytes | None]:
        """The envelopes after seq ``after``, then each new one while the batch runs;
        ``None`` when none came for `KEEP_ALIVE` seconds. Ends when the run does, or at
        shutdown."""
        while True:
            while after < batch.last_seq:
                after += 1
                yield batch.envelopes[after - 1]
            if batch.status != "running" or self._shutting_down.is_set():
                return
            with anyio.move_on_after(KEEP_ALIVE) as waiting:
                await batch.changed()
            if waiting.cancelled_caught:
                yield None


KEEP_ALIVE = 15.0
"""Seconds between SSE keep-alive comments while nothing happens."""
