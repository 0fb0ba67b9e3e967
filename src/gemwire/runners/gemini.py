"""Run Gemini CLI headlessly: start it, stream normalized events, end cleanly whatever happens.

    async with run_gemini("fix the failing test", GeminiOptions(approval_mode="yolo")) as run:
        async for event in run:
            print(event.type)
    print(run.result.answer)

The run owns its task group (one task reads stdout through the decoder and normalizer,
one drains stderr). Leaving the ``async with`` early — ``break``, an exception, a
cancelled scope — stops the CLI's whole process group. The last event is always exactly
one ``turn_completed``, and ``run.result`` is complete once the events are.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
import msgspec
from anyio.abc import ObjectSendStream

from gemwire._normalize.gemini_errors import explained
from gemwire._normalize.masking import Masker, known_secrets
from gemwire._normalize.notices import notice
from gemwire._transport.process import Child
from gemwire._transport.stderr import StderrReader
from gemwire.errors import GemwireError, LockFolderUnsafe
from gemwire.events import Event, Notice, SessionStarted, TurnCompleted, TurnError
from gemwire.runners._first_start import spawn_first_start
from gemwire.runners._gemini_budget import RunBudget, is_retry_line
from gemwire.runners._gemini_home import RunHome, settings_servers
from gemwire.runners._gemini_outputs import output_reader
from gemwire.runners._host_signals import HostSignals, host_signals
from gemwire.runners._session_follower import SessionFollower, files_changed, with_estimates
from gemwire.runners.discovery import GeminiExecutable, find_gemini
from gemwire.runners.gemini_checks import check_run, check_version
from gemwire.runners.gemini_options import (
    MAX_PROMPT_BYTES,
    GeminiOptions,
    build_argv,
    named_session,
)
from gemwire.runners.gemini_result import ResumeToken, RunResult, parse_resume_line
from gemwire.runners.session_lock import SessionLock
from gemwire.runners.turn_result import TurnRecord
from gemwire.sessions import remove_resume_stubs

# The options and the result live in modules of their own; this is where callers find them.
__all__ = (
    "MAX_PROMPT_BYTES",
    "GeminiOptions",
    "GeminiRun",
    "ResumeToken",
    "RunResult",
    "parse_resume_line",
    "run_gemini",
    "run_gemini_sync",
)

POST_RESULT_GRACE = 5.0
"""Seconds the CLI may take to exit after its ``result`` before it is stopped."""

STDERR_GRACE = 2.0
"""Seconds to wait for the rest of stderr after the CLI exited (a grandchild may hold it)."""


class GeminiRun:
    """One run of the Gemini CLI; iterate it for events, then read `result`."""

    def __init__(self, prompt: str, options: GeminiOptions) -> None:
        self.prompt = prompt
        self.options = options
        self._data = prompt.encode()
        check_run(self._data, options)
        self._cwd = str(Path(options.cwd or os.getcwd()).resolve())
        self._executable = find_gemini(options.executable, cwd=self._cwd)
        check_version(options, self._executable.version)
        self._budget = RunBudget(options)
        self._output = output_reader(options, self._budget, cwd=self._cwd)
        self._kept = TurnRecord()  # for the result: never every event of a long run
        self._stopped: TurnError | None = None
        self._held: TurnCompleted | None = None  # sent last, once the exit code is known
        self._started = 0.0
        self._result: RunResult | None = None
        self._receive: AsyncIterator[Event] | None = None
        self._child: Child | None = None
        self._env = {**(os.environ if options.inherit_env else {}), **options.env}
        # One Node process, not two: the launcher otherwise starts the CLI again as its child
        # with a larger heap and waits for it, which doubles the start (docs/running.md).
        # An environment that sets the variable, even empty, keeps its choice.
        self._env.setdefault("GEMINI_CLI_NO_RELAUNCH", "1")
        if options.gemini_home:
            self._env["GEMINI_CLI_HOME"] = options.gemini_home
        if options.system_prompt_file is not None:
            # A path: the CLI reads true, 1, false and 0 as switches, not names
            # (docs/gemini-cli.md#the-system-prompt).
            path = Path(self._cwd, options.system_prompt_file).resolve()
            self._env["GEMINI_SYSTEM_MD"] = str(path)
        self._masker = Masker(known_secrets(self._env))
        self._stderr = StderrReader(secrets=self._masker.secrets)
        self._home = self._env.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
        self._lock: SessionLock | None = None
        self._run_home: RunHome | None = None
        # turn_completed goes last: stdout waits for stderr's notices (boundedly).
        self._stderr_done = anyio.Event()
        self._notices_closed = False
        self._follower = (
            SessionFollower(self._home, self._cwd, lambda: self._output.session_id, time.time())
            if options.follow_session_file
            else None
        )

    @property
    def result(self) -> RunResult:
        """The outcome; available once the events are exhausted or the run was left."""
        if self._result is None:
            raise GemwireError("the run has not ended yet: iterate its events first")
        return self._result

    @property
    def executable(self) -> GeminiExecutable:
        return self._executable

    async def cancel(self, message: str = "the caller stopped the run") -> None:
        """Stop the run: the CLI and everything it started are stopped, and the events go
        on to one ``turn_completed`` with error kind ``cancelled`` and ``message``.

        Unlike leaving the ``async with`` early, every event is still delivered. Does
        nothing once the run has ended or was stopped for another reason.
        """
        if self._child is not None and self._result is None:
            await self._stop(self._child, "cancelled", message)

    def __aiter__(self) -> AsyncIterator[Event]:
        if self._receive is None:
            raise GemwireError("use the run inside `async with run_gemini(...) as run`")
        return self._receive

    async def wait(self) -> RunResult:
        """Consume the run's events and return its result (as `AcpTurn.wait` does)."""
        async for _ in self:
            pass
        return self.result

    @asynccontextmanager
    async def _running(self) -> AsyncGenerator[GeminiRun]:
        env = self._env
        self._started = time.monotonic()
        argv = build_argv(self._executable, self.options)
        send, receive = anyio.create_memory_object_stream[Event](max_buffer_size=256)
        self._receive = receive
        known = self.options.session_id or named_session(self.options.resume)
        try:
            if known:
                lock = SessionLock(self._home, known)
                if not lock.try_acquire():
                    waiting = f"waiting for another run of session {known}"
                    await send.send(self._record(self._notice(waiting, "info")))
                    await lock.acquire()
                self._lock = lock
            if self.options.mcp_servers:
                servers = settings_servers(self.options.mcp_servers, self._cwd)
                self._run_home = RunHome(Path(self._home), servers)
                env = {**env, "GEMINI_CLI_HOME": str(self._run_home.path)}
            child = self._child = await spawn_first_start(
                self._home, argv, cwd=Path(self._cwd), env=env
            )
        except BaseException:
            self._release()
            send.close()
            receive.close()
            raise
        if self._executable.newer_than_tested:
            notice = self._notice(
                f"Gemini CLI {self._executable.version} is newer than the versions gemwire "
                "is tested against; unknown output is kept as unknown events",
            )
            send.send_nowait(self._record(notice))  # nothing consumed yet; the buffer has room
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(child.send_input, self._data)
                tg.start_soon(self._read_stderr, child, send.clone())
                tg.start_soon(self._read_stdout, child, send)
                try:
                    yield self
                finally:
                    if self._result is None:  # the caller left before the end
                        self._stopped = self._stopped or TurnError(
                            kind="cancelled", message="the caller stopped the run"
                        )
                        await child.stop()
                        tg.cancel_scope.cancel()
        finally:
            await child.aclose()
            self._release()
            receive.close()
            if self._result is None:  # left early: the events go nowhere, the result counts
                self._take(self._output.finish(exit_code=child.returncode, stopped=self._stopped))
                with anyio.CancelScope(shield=True):
                    await self._protect_resumed_session(None)
                self._complete(child.returncode)

    def _notice(
        self, message: str, severity: Literal["info", "warning", "error"] = "warning"
    ) -> Notice:
        message = self._masker.text(message)  # e.g. an OSError's text
        return notice("gemini", self._output.session_id, message, severity=severity)

    def _record(self, event: Event) -> Event:
        self._kept.add(event)
        return event

    async def _stop(self, child: Child, kind: str, message: str) -> None:
        if self._stopped is None:
            self._stopped = TurnError(kind=kind, message=message)
        await child.stop()

    async def _read_stdout(self, child: Child, send: ObjectSendStream[Event]) -> None:
        options = self.options
        async with send:
            with anyio.move_on_after(options.timeout) as wall:
                while True:
                    # After the result the CLI only has to exit; don't wait on it forever.
                    idle = POST_RESULT_GRACE if self._held else options.idle_timeout
                    with anyio.move_on_after(idle) as waiting:
                        data = await child.read("stdout")
                    if waiting.cancelled_caught:
                        if self._held is None:
                            await self._stop(child, "timeout", f"no output for {idle:g} s")
                        else:
                            await child.stop()
                        break
                    if not data:
                        break
                    events, spent = self._output.feed(data)
                    for event in self._take(events):
                        if isinstance(event, SessionStarted):
                            self._lock_new_session(event.session_id)
                        await send.send(event)
                        if isinstance(event, SessionStarted):
                            await self._protect_resumed_session(send)
                    if spent is not None:  # the events end at the one that spent it
                        await self._stop(child, "cancelled", spent)
                        break
            if wall.cancelled_caught:
                await self._stop(
                    child, "timeout", f"the run took longer than {options.timeout:g} s"
                )
            exit_code = await child.wait()
            # json-format errors arrive on stderr: read it to the end first (boundedly).
            with anyio.move_on_after(STDERR_GRACE):
                await self._stderr_done.wait()
            self._notices_closed = True
            tail = self._output.finish(exit_code=exit_code, stopped=self._stopped)
            for event in self._take(tail):
                await send.send(event)
            await self._protect_resumed_session(send)
            await send.send(self._complete(exit_code))

    def _take(self, events: list[Event]) -> list[Event]:
        """Mask secrets and record a batch at once (a cancelled send must not lose any);
        hold back turn_completed. Returns the events to send now."""
        if self._follower is not None:  # what the session file has gained goes first
            events = self._follower.poll() + events
        if self._masker:  # every event the run emits passes here (its stderr is masked)
            events = self._masker.events(events)
        to_send = []
        for event in events:
            if isinstance(event, TurnCompleted):
                self._held = event
            else:
                to_send.append(self._record(event))
        return to_send

    def _complete(self, exit_code: int | None) -> TurnCompleted:
        """Record the held turn_completed, with the exit code, and the result with it."""
        held = self._held
        assert held is not None, "the normalizer always completes the turn"
        held = with_estimates(held, self._follower)
        if held.error is not None:
            error = held.error
            if error.exit_code is None:
                error = msgspec.structs.replace(error, exit_code=exit_code)
            error = explained(
                error, self._stderr.lines, exit_code=exit_code, retrying=self._budget.retrying
            )
            held = msgspec.structs.replace(held, error=error)
        self._finalize(held, exit_code)
        return held

    def _lock_new_session(self, session_id: str | None) -> None:
        """Hold the session the CLI named, so that runs resuming it wait for this one."""
        if self._lock is not None or not session_id:
            return
        try:
            lock = SessionLock(self._home, session_id)
        except LockFolderUnsafe as exc:  # the run is under way: go on, unguarded
            self._record(self._notice(f"session {session_id} is not locked: {exc}"))
            return
        if lock.try_acquire():
            self._lock = lock
        else:  # resumed by `latest` or an index while another run has it: too late to wait
            self._record(
                self._notice(f"another run is using session {session_id} at the same time")
            )

    async def _protect_resumed_session(self, send: ObjectSendStream[Event] | None) -> None:
        """Remove the stub a resume wrote, or Gemini's next start deletes the session. A
        ``--session-file`` run writes one too, beside the session it imported
        (docs/gemini-cli.md#a-session-file-given-to---session-file)."""
        session_id = self._output.session_id
        opened = self.options.resume is not None or self.options.session_file is not None
        if not opened or session_id is None:
            return
        try:
            await anyio.to_thread.run_sync(remove_resume_stubs, self._home, self._cwd, session_id)
        except OSError as exc:
            notice = self._record(
                self._notice(
                    f"could not remove the stub file of resumed session {session_id} ({exc}); "
                    "Gemini's session cleanup may delete the session at its next start"
                )
            )
            if send is not None:
                await send.send(notice)

    def _release(self) -> None:
        if self._run_home is not None:
            self._run_home.close()
            self._run_home = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    async def _read_stderr(self, child: Child, send: ObjectSendStream[Event]) -> None:
        async with send:

            async def on_line(line: str) -> None:
                await self._stderr_line(child, send, line)

            await self._stderr.pump(lambda: child.read("stderr"), on_line)
            self._stderr_done.set()

    async def _stderr_line(self, child: Child, send: ObjectSendStream[Event], line: str) -> None:
        for event in self._take(self._output.stderr_line(line)):
            if isinstance(event, SessionStarted):
                self._lock_new_session(event.session_id)
            if not self._notices_closed:
                await send.send(event)
        if self._notices_closed or not is_retry_line(line):
            return
        retrying = notice("gemini", self._output.session_id, line, source="stderr")
        await send.send(self._record(retrying))
        spent = self._budget.spent_by_retry(line)
        if spent is not None:
            await self._stop(child, "rate_limited", spent)

    def _finalize(self, turn: TurnCompleted, exit_code: int | None) -> None:
        self._result = RunResult(
            ok=turn.ok,
            answer=turn.answer,
            error=turn.error,
            stop_reason=turn.stop_reason,
            files_changed=files_changed(self._kept.files_changed),
            usage=turn.usage,
            session_id=turn.session_id,
            duration_s=time.monotonic() - self._started,
            notices=list(self._kept.notices),
            stderr_tail=self._stderr.tail,
            exit_code=exit_code,
            executable=self._executable,
        )


@asynccontextmanager
async def run_gemini(
    prompt: str, options: GeminiOptions | None = None
) -> AsyncGenerator[GeminiRun]:
    """Start Gemini CLI on ``prompt`` (sent on stdin, never in argv).

    Raises `GeminiNotFound`, `UnsupportedVersion` or `PromptTooLarge` before starting
    anything; every failure after that ends in a ``turn_completed`` event and
    ``run.result`` instead (``run.result.raise_for_error()`` turns it into an exception).
    """
    run = GeminiRun(prompt, options or GeminiOptions())
    async with run._running():
        yield run


def run_gemini_sync(prompt: str, options: GeminiOptions | None = None) -> RunResult:
    """`run_gemini` for synchronous callers: runs to the end and returns the result.

    In the main thread, SIGTERM and SIGHUP stop the run cleanly first (as `cancel`) and
    are then delivered again to the handler that was there before: by default, the
    process ends as it would have, with nothing of the run left behind (`host_signals`).
    """

    async def main(signals: HostSignals) -> RunResult:
        async with run_gemini(prompt, options) as run, anyio.create_task_group() as tg:
            await tg.start(signals.cancel_on_signal, run.cancel)
            async for _ in run:
                pass
            tg.cancel_scope.cancel()
        return run.result

    with host_signals() as signals:
        return anyio.run(main, signals)
