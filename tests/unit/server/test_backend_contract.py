"""The `SessionBackend` contract, run against each implementation on its own: the ACP
backend (an agent kept between turns; a scripted one in memory) and the ``gemini-stream``
backend (a run a turn; `FakeStreamLauncher`), each driven through a minimal `SessionHost`
rather than `SessionManager`, so what is checked is the backend's own behaviour.

Each turn ends with exactly one ``turn_completed``, last; a second prompt and a cancel with
no turn are `IllegalTransition`; a cancel ends the turn ``cancelled``; a stop ends a running
turn first and leaves the session ``stopped`` with no agent; a prompt then continues it, in
the agent's same session; an unknown mode is a `BadRequest`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from anyio.abc import TaskGroup
from kit.server import FakeStreamLauncher, ScriptedLauncher, make_config

from gemwire.server.backend import SessionBackend
from gemwire.server.backend_acp import AcpBackend
from gemwire.server.backend_stream import StreamBackend
from gemwire.server.config import ServerConfig
from gemwire.server.live_session import LiveSession
from gemwire.server.responses import BadRequest
from gemwire.server.session_state import IllegalTransition
from gemwire.server.spares import SpareAgents
from gemwire.server.store import SessionRecord, SessionStore
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio


async def hang_or_answer(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    """The ACP side of `kit.server.FakeRun`: ``hang`` waits for the cancel."""
    [block] = params["prompt"]
    await agent.say(sid, f"re: {block['text']}")
    if block["text"] == "hang":
        await agent.cancelled.wait()
        return "cancelled"
    return "end_turn"


class Host:
    """The `SessionHost` a backend is given: counts and saves, confines to nothing."""

    def __init__(self, config: ServerConfig, tg: TaskGroup) -> None:
        self.config = config
        self._tg = tg
        self.reserved = 0
        self.saved = 0

    @property
    def tg(self) -> TaskGroup:
        return self._tg

    def reserve(self) -> None:
        self.reserved += 1

    def release(self) -> None:
        self.reserved -= 1

    def confined(self, session: LiveSession) -> str:
        return session.record.cwd

    def save(self, session: LiveSession) -> None:
        self.saved += 1


class Opened:
    """A backend and one session of it, ready for a prompt."""

    def __init__(self, backend: SessionBackend, session: LiveSession, host: Host) -> None:
        self.backend = backend
        self.session = session
        self.host = host

    def events(self, after: int) -> list[dict[str, Any]]:
        """The events logged after seq ``after`` (state envelopes as ``state:<status>``)."""
        found = []
        for _, line in self.session.log.read(after):
            envelope = msgspec.json.decode(line)
            event = envelope.get("event")
            found.append(event if event else {"type": f"state:{envelope['state']['status']}"})
        return found

    async def turn(self, text: str) -> list[dict[str, Any]]:
        after = await self.backend.prompt(self.session, text)
        await self.session.turn_done.wait()
        return self.events(after)


Opener = Callable[[Path], Any]


@asynccontextmanager
async def acp_session(tmp_path: Path) -> AsyncIterator[Opened]:
    async with anyio.create_task_group() as tg:
        config = make_config(str(tmp_path), str(tmp_path / "state"))
        host = Host(config, tg)
        async with SpareAgents(ScriptedLauncher(tg, hang_or_answer), (), str(tmp_path)) as spares:
            backend = AcpBackend(host, spares)
            session = _session(config, "scripted")
            await backend.start(session, "start", load=False)
            yield Opened(backend, session, host)
            await backend.stop(session, "the test ended")
        tg.cancel_scope.cancel()


@asynccontextmanager
async def stream_session(tmp_path: Path) -> AsyncIterator[Opened]:
    async with anyio.create_task_group() as tg:
        config = make_config(str(tmp_path), str(tmp_path / "state"))
        host = Host(config, tg)
        backend = StreamBackend(host, FakeStreamLauncher())
        session = _session(config, "gemini-stream")
        session.state.handle("ready")  # as SessionManager makes one: no agent to start
        yield Opened(backend, session, host)
        await backend.stop(session, "the test ended")
        session.log.close()
        tg.cancel_scope.cancel()


def _session(config: ServerConfig, agent: str) -> LiveSession:
    store = SessionStore(config.state_dir)
    store.create()
    record = SessionRecord(id="s_0123456789abcdef", agent=agent, cwd=config.roots[0], created="")
    store.save(record)
    return LiveSession(config, record, store.log(record.id))


@pytest.fixture(params=[acp_session, stream_session], ids=["acp", "stream-json"])
def opened(request: pytest.FixtureRequest) -> Opener:
    opener: Opener = request.param
    return opener


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


async def test_a_turn_ends_with_one_turn_completed(opened: Opener, tmp_path: Path) -> None:
    async with opened(tmp_path) as it:
        after = await it.backend.prompt(it.session, "hello")
        assert it.backend.runs_agent(it.session)  # its turn counts against the limit
        with pytest.raises(IllegalTransition, match="a turn is running"):
            await it.backend.prompt(it.session, "again")
        await it.session.turn_done.wait()
        events = it.events(after)
        assert it.session.status == "idle"
        assert it.host.reserved == 0
    types = _types(events)
    assert types[0] == "state:running"
    assert types[-2:] == ["turn_completed", "state:idle"]
    assert types.count("turn_completed") == 1
    [completed] = [e for e in events if e["type"] == "turn_completed"]
    assert (completed["ok"], completed["stop_reason"], completed["answer"]) == (
        True,
        "end_turn",
        "re: hello",
    )


async def test_a_cancel_ends_the_turn_and_one_without_a_turn_is_refused(
    opened: Opener, tmp_path: Path
) -> None:
    async with opened(tmp_path) as it:
        with pytest.raises(IllegalTransition, match="no turn runs"):
            await it.backend.cancel(it.session)
        after = await it.backend.prompt(it.session, "hang")
        while "message_delta" not in _types(it.events(after)):  # the turn is under way
            await anyio.wait_all_tasks_blocked()
        await it.backend.cancel(it.session)
        await it.backend.cancel(it.session)  # asked already: sent once
        await it.session.turn_done.wait()
        events = it.events(after)
        assert it.session.status == "idle"
    [completed] = [e for e in events if e["type"] == "turn_completed"]
    assert completed["stop_reason"] == "cancelled"
    assert _types(events)[-2:] == ["turn_completed", "state:idle"]


async def test_a_stop_ends_the_turn_first_and_a_prompt_continues_the_session(
    opened: Opener, tmp_path: Path
) -> None:
    async with opened(tmp_path) as it:
        after = await it.backend.prompt(it.session, "hang")
        while "message_delta" not in _types(it.events(after)):
            await anyio.wait_all_tasks_blocked()
        first_session = it.session.record.agent_session_id
        await it.backend.stop(it.session, "idle timeout")
        stopped = it.events(after)
        assert (it.session.status, it.backend.runs_agent(it.session)) == ("stopped", False)
        assert it.session.state.stop_reason == "idle timeout"
        again = await it.turn("more")
        assert it.session.record.agent_session_id == first_session  # the same agent session
        assert it.session.status == "idle"
    assert _types(stopped).count("turn_completed") == 1
    assert _types(stopped)[-1] == "state:stopped"
    assert _types(again).count("turn_completed") == 1
    [completed] = [e for e in again if e["type"] == "turn_completed"]
    assert completed["answer"] == "re: more"


async def test_an_unknown_mode_is_a_bad_request(opened: Opener, tmp_path: Path) -> None:
    async with opened(tmp_path) as it:
        with pytest.raises(BadRequest):
            await it.backend.set_mode(it.session, "no-such-mode")
        assert it.session.status == "idle"
