"""A child's stdin whose reader is gone, as Windows' pipes report it: a raw
``BrokenPipeError`` or ``ConnectionResetError`` (anyio passes it on as it is while asyncio's
pipe transport does not yet count itself closed), where POSIX pipes give anyio's own
``BrokenResourceError``. gemwire treats both alike."""

from __future__ import annotations

import errno
import signal

import anyio
import anyio.abc
import pytest

from gemwire._transport.platform import PopenOptions
from gemwire._transport.process import Child

pytestmark = pytest.mark.anyio

GONE = [
    BrokenPipeError(errno.EPIPE, "The pipe is being closed"),  # ERROR_NO_DATA (232)
    ConnectionResetError(errno.ECONNRESET, "Connection lost"),
    anyio.BrokenResourceError(),  # what the same is on Linux
]
IDS = ["broken pipe", "connection reset", "anyio's own"]


class GoneStdin(anyio.abc.ByteSendStream):
    """A stdin whose reader is gone: every write fails with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.closed = False

    async def send(self, item: bytes) -> None:
        raise self.error

    async def aclose(self) -> None:
        self.closed = True


class StdinOnly(anyio.abc.Process):
    """A process of which only stdin is used."""

    def __init__(self, stdin: GoneStdin) -> None:
        self._stdin = stdin

    @property
    def stdin(self) -> GoneStdin:
        return self._stdin

    @property
    def stdout(self) -> None:
        return None

    @property
    def stderr(self) -> None:
        return None

    @property
    def pid(self) -> int:
        return 4242

    @property
    def returncode(self) -> int | None:
        return None

    async def wait(self) -> int:
        raise AssertionError("not waited for here")

    def terminate(self) -> None:
        raise AssertionError("not stopped here")

    def kill(self) -> None:
        raise AssertionError("not stopped here")

    def send_signal(self, sig: signal.Signals) -> None:
        raise AssertionError("not signalled here")

    async def aclose(self) -> None:
        raise AssertionError("not closed here")


class NoTree:
    """A `ProcessTree` nothing here reaches."""

    def popen_options(self) -> PopenOptions:
        return {}

    def started(self, pid: int) -> None: ...

    def terminate(self) -> None: ...

    def escalate(self) -> bool:
        return False

    def kill(self) -> None: ...

    def kill_leftovers(self) -> None: ...

    def close(self) -> None: ...


@pytest.mark.parametrize("error", GONE, ids=IDS)
async def test_input_to_a_child_that_stopped_reading_is_dropped_and_stdin_closed(
    error: Exception,
) -> None:
    stdin = GoneStdin(error)
    child = Child(StdinOnly(stdin), {}, NoTree())
    await child.send_input(b"the prompt")
    assert stdin.closed is True


@pytest.mark.parametrize("error", GONE, ids=IDS)
async def test_writing_to_a_child_that_stopped_reading_is_anyios_broken_resource(
    error: Exception,
) -> None:
    child = Child(StdinOnly(GoneStdin(error)), {}, NoTree())
    with pytest.raises(anyio.BrokenResourceError) as caught:
        await child.write(b"{}\n")
    assert caught.value is error or caught.value.__cause__ is error


async def test_any_other_error_writing_stdin_is_no_reader_gone() -> None:
    error = PermissionError(errno.EACCES, "Access is denied")
    stdin = GoneStdin(error)
    with pytest.raises(PermissionError) as caught:
        await Child(StdinOnly(stdin), {}, NoTree()).send_input(b"the prompt")
    assert (caught.value, stdin.closed) == (error, True)
