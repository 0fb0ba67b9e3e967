"""The `SessionBackend` of ``gemini-stream`` sessions: a ``gemini -p`` run a turn, in the
session's folder, resuming the first run's session; no agent between turns.

Each turn counts against ``--max-sessions`` while it runs. Its model is the session's
(the next run's ``--model``); it has no modes or options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from gemwire.errors import GemwireError, RunFailed
from gemwire.events import SessionStarted, TurnCompleted, TurnError
from gemwire.server.backend import SessionHost
from gemwire.server.live_session import LiveSession
from gemwire.server.responses import BadRequest
from gemwire.server.stream import GEMINI_STREAM, StreamLauncher
from gemwire.wire import acp

__all__ = ("StreamBackend",)


class StreamBackend:
    """See the module docstring."""

    def __init__(self, host: SessionHost, launcher: StreamLauncher) -> None:
        self.host = host
        self.launcher = launcher

    def check(self) -> None:
        """Raise what keeps ``gemini -p`` from running (before a session is made)."""
        self.launcher.check()

    def runs_agent(self, session: LiveSession) -> bool:
        return session.busy

    async def prompt(self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]) -> int:
        if not isinstance(prompt, str):
            if not all(isinstance(block, acp.TextContent) for block in prompt):
                raise BadRequest(f"{GEMINI_STREAM} takes text prompts only")
            prompt = "".join(block.text for block in prompt if isinstance(block, acp.TextContent))
        self.host.reserve()
        try:
            cwd = self.host.confined(session)  # each turn is a new `gemini -p` there
            session.state.handle("prompt")  # from here its turn counts against the limit
        finally:
            self.host.release()
        after = session.last_seq
        session.turn_done = anyio.Event()
        session.state.handle("turn_begun")
        self.host.tg.start_soon(self._run_turn, session, prompt, cwd)
        return after

    async def _run_turn(self, session: LiveSession, prompt: str, cwd: str) -> None:
        record = session.record
        try:
            async with self.launcher.run(
                prompt,
                cwd,
                resume=record.agent_session_id,
                permissions=record.permissions,
                model=record.model,
            ) as run:
                session.stream_run = run
                if session.state.phase in ("cancelling", "stopping"):
                    await run.cancel(session.state.stop_reason or "the turn was cancelled")
                async for event in run:
                    if isinstance(event, SessionStarted) and record.agent_session_id is None:
                        record.agent_session_id = event.session_id
                    session.publish_event(event)
        except GemwireError as exc:  # it could not start: still one turn_completed
            kind = exc.kind if isinstance(exc, RunFailed) else "agent"
            error = TurnError(kind=kind, message=str(exc))
            session.publish_event(
                TurnCompleted(
                    agent=session.agent_name,
                    session_id=record.agent_session_id,
                    ok=False,
                    stop_reason="error",
                    error=error,
                    answer="",
                )
            )
        finally:
            session.stream_run = None
            session.state.handle("turn_ended")
            if session.state.phase == "stopping":  # its run was its agent: it has stopped
                session.state.exited("stopped")
            self.host.save(session)
            session.turn_done.set()

    async def cancel(self, session: LiveSession) -> None:
        if session.state.cancel() and session.stream_run is not None:
            await session.stream_run.cancel("the turn was cancelled")
        # else asked already, or the run is cancelled as it starts

    async def stop(self, session: LiveSession, reason: str) -> None:
        if session.busy:
            session.state.handle("stop", reason)
            if session.stream_run is not None:
                await session.stream_run.cancel(reason)
            await session.turn_done.wait()

    async def set_mode(self, session: LiveSession, mode_id: str) -> None:
        raise BadRequest(f"{GEMINI_STREAM} sessions have a model, and no modes or options")

    async def set_model(self, session: LiveSession, model_id: str) -> None:
        session.record.model = model_id  # the next run's --model
        self.host.save(session)

    async def set_config(self, session: LiveSession, config_id: str, value: Any) -> None:
        raise BadRequest(f"{GEMINI_STREAM} sessions have a model, and no modes or options")
