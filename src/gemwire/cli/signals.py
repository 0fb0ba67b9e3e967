"""Ctrl-C, SIGTERM and SIGHUP: the one way every command that runs something stops on them.

The work is cancelled, not killed: a Gemini run or an ACP turn goes on to its final
``turn_completed`` (kind ``cancelled``, the message names the signal), a batch stops its
tasks, and every process they started is gone. Then the command exits as a shell reports
the signal (130, 143 or 129, `gemwire.cli.exit_codes`), so ``timeout``, ``docker stop``,
systemd and a CI runner see why it ended.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus

from gemwire._portable import CTRL_BREAK, HANGUP, RECEIVES_SIGNALS
from gemwire.cli.exit_codes import EXIT_CANCELLED, EXIT_HANGUP, EXIT_TERMINATED

__all__ = ("REASONS", "SignalStop")

T = TypeVar("T")

REASONS = {
    signal.SIGINT: "interrupted (Ctrl-C)",
    signal.SIGTERM: "stopped by SIGTERM",
    **{sig: f"stopped by {sig.name} (the terminal closed)" for sig in HANGUP},
}
"""The signals that stop a command, and what the cancelled turn's error says."""
_EXITS = {
    signal.SIGINT: EXIT_CANCELLED,
    signal.SIGTERM: EXIT_TERMINATED,
    **dict.fromkeys(HANGUP, EXIT_HANGUP),
}


@contextmanager
def _ctrl_break_as_ctrl_c() -> Iterator[None]:
    """Windows: Ctrl-Break ends Python on the spot by default (no ``finally`` runs); while
    the work runs, it stops it as Ctrl-C does. Elsewhere there is no Ctrl-Break."""
    previous = {sig: signal.signal(sig, signal.default_int_handler) for sig in CTRL_BREAK}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class SignalStop:
    """Runs a command's async work; a stopping signal cancels it cleanly.

    Until the work says what to cancel (`cancels`), a signal cancels all of it: a run
    still starting, a batch. After, it calls that with the reason (``GeminiRun.cancel``,
    ``AcpTurn.stop``), and the work goes on to show the end of the events. A later signal
    calls ``give_up``, if the work gave one: a person pressing Ctrl-C again will not wait
    for an agent's grace to end.
    """

    def __init__(self) -> None:
        self.caught: signal.Signals | None = None
        """The first stopping signal that came."""
        self._cancel: Callable[[str], Coroutine[Any, Any, object]] | None = None
        self._give_up: Callable[[], object] | None = None

    def cancels(
        self,
        cancel: Callable[[str], Coroutine[Any, Any, object]],
        *,
        give_up: Callable[[], object] | None = None,
    ) -> None:
        """From now on, a signal calls ``cancel(reason)`` instead of cancelling everything,
        and a later one ``give_up()``."""
        self._cancel = cancel
        self._give_up = give_up

    def run(self, work: Callable[[], Awaitable[T]]) -> T | None:
        """``anyio.run(work)``: its result, or ``None`` when a signal cancelled all of it."""
        try:
            with _ctrl_break_as_ctrl_c():
                return anyio.run(self._watched, work)
        except KeyboardInterrupt:  # Ctrl-C before the signal receiver was in place
            self.caught = self.caught or signal.SIGINT
            return None

    def exit_if_stopped(self) -> None:
        """After a stopping signal, exit as a shell reports it: 130, 143 or 129."""
        if self.caught is not None:
            sys.exit(_EXITS[self.caught])

    async def _watched(self, work: Callable[[], Awaitable[T]]) -> T | None:
        result: T | None = None
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            await group.start(self._receive, group.cancel_scope)
            try:
                result = await work()
            except Exception as exc:  # noqa: BLE001 - raised below as it is, not in a group
                failure = exc
            group.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return result

    async def _receive(
        self,
        everything: anyio.CancelScope,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        if RECEIVES_SIGNALS:
            await self._receive_signals(everything, task_status)
        else:
            # Windows: Ctrl-C and Ctrl-Break end anyio.run with KeyboardInterrupt, which
            # `run` turns into SIGINT's exit.
            task_status.started()

    async def _receive_signals(
        self, everything: anyio.CancelScope, task_status: TaskStatus[None]
    ) -> None:
        with anyio.open_signal_receiver(*REASONS) as received:
            task_status.started()
            async with anyio.create_task_group() as cancelling:
                async for signum in received:
                    sig = signal.Signals(signum)
                    first, self.caught = self.caught is None, self.caught or sig
                    if self._cancel is None:
                        everything.cancel()
                        return
                    if first:  # in a task: the next signal is heard while it cancels
                        cancelling.start_soon(self._cancel, REASONS[sig])
                    elif self._give_up is not None:
                        self._give_up()
