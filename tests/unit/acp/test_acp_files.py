"""The confined file system refuses what is not a regular file before opening it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from gemwire.errors import AccessDenied
from gemwire.runners.acp.files import ConfinedFileSystem


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    files = ConfinedFileSystem([tmp_path])
    outcome: list[BaseException | str] = []

    def read() -> None:
        try:
            outcome.append(files.read_text(str(fifo)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # opening blocked for a writer: unblock it, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=10)
        pytest.fail("read_text blocked opening a FIFO")
    assert len(outcome) == 1
    assert isinstance(outcome[0], AccessDenied)
    assert str(outcome[0]) == f"not a regular file: {fifo}"


def test_a_fifo_is_not_replaced_by_a_write(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(AccessDenied, match="not a regular file"):
        ConfinedFileSystem([tmp_path]).write_text(str(fifo), "x")
    assert fifo.is_fifo()
