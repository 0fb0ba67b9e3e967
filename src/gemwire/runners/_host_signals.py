"""SIGTERM and SIGHUP during a synchronous run: stop the run cleanly, then let them act.

``timeout``, ``docker stop``, systemd, a CI cancel and a closed terminal end a program
with SIGTERM or SIGHUP. By default that kills Python on the spot: no ``finally`` runs, so
the session lock and the resumed-session guard are skipped (the launcher still stops the
CLI's tree, see ``_transport/reaper.py``). `run_gemini_sync` and `run_acp_sync` own their
event loop, so they can do better: they catch them while the run or turn lasts, cancel it
(``GeminiRun.cancel``: the CLI gets its grace to finish writing the session;
``AcpTurn.stop``: the agent gets its grace to end the turn), and then deliver the signal
again to whatever handler the program had — the default one ends the process as before, a
program's own one runs.

Only in the main thread (Python delivers signals there), and a signal the program ignores
stays ignored. `run_gemini` and `run_acp` inside a program's own event loop install
nothing: the program decides what its signals do (docs/running.md).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import anyio
from anyio.abc import TaskStatus

from gemwire._portable import STOP_SIGNALS

__all__ = ("HostSignals", "host_signals")

STOPPING = STOP_SIGNALS
"""SIGTERM and SIGHUP; on Windows none (`gemwire._portable.STOP_SIGNALS`)."""


class HostSignals:
    """The signals to turn into a clean cancel, and the first one that came."""

    def __init__(self, signals: tuple[signal.Signals, ...]) -> None:
        self.signals = signals
        self.caught: signal.Signals | None = None

    async def cancel_on_signal(
        self,
        cancel: Callable[[str], Awaitable[object]],
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Call ``cancel(reason)`` (``GeminiRun.cancel``, ``AcpTurn.stop``) when one of the
        signals comes (start it with ``tg.start``)."""
        if not self.signals:
            task_status.started()
            return
        with anyio.open_signal_receiver(*self.signals) as received:
            task_status.started()
            async for sig in received:
                self.caught = self.caught or sig
                await cancel(f"stopped by {sig.name}")


@contextmanager
def host_signals() -> Iterator[HostSignals]:
    """The `HostSignals` to watch here; on exit the program's handlers are back, and a
    signal that came is delivered to them."""
    if threading.current_thread() is not threading.main_thread():
        yield HostSignals(())
        return
    previous = {sig: signal.getsignal(sig) for sig in STOPPING}
    # Ignored, or a handler outside Python that could not be put back: leave it alone.
    watched = {s: h for s, h in previous.items() if h is not None and h != signal.SIG_IGN}
    signals = HostSignals(tuple(watched))
    try:
        yield signals
    finally:
        for sig, handler in watched.items():
            signal.signal(sig, handler)  # asyncio puts back SIG_DFL, not the program's
        if signals.caught is not None:
            os.kill(os.getpid(), signals.caught)
