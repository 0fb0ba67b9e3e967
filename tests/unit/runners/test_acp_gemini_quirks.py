"""Gemini CLI's rules (runners/acp/gemini_cli.py) run for Gemini alone: no load within the
minute its session's file is named for (it would reset the session), its late replay
waited for, its "no such session" said for gemwire's users; other agents load at once.

The clock is a seam: `GeminiCliQuirks(now=, sleep=)`, and trio's `MockClock` for the
client (virtual time, so "no wait at all" is exact)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.corpus import RECORDINGS
from kit.materialized import Materialized

from gemwire.errors import AgentRequestFailed
from gemwire.events import MessageDelta, UserMessage
from gemwire.runners.acp import AcpOptions
from gemwire.runners.acp.gemini_cli import REPLAY_SETTLE, GeminiCliQuirks
from gemwire.runners.acp.quirks import NoQuirks
from gemwire.testing import AgentScenario, ScriptedAgent, scripted_client
from gemwire.wire import acp

# trio with a clock that jumps to the next deadline: the quirks' waits take no time.
pytestmark = [pytest.mark.anyio, pytest.mark.anyio_backends("trio+autojump")]

SESSION = "1463b159-95bf-4f97-ae5c-9baf64366009"
"""The session of the recorded run, in session-2026-11-22T09-31-1463b159.jsonl."""


class Clock:
    """A wall clock that moves only when slept on."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> datetime.datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += datetime.timedelta(seconds=seconds)


def utc(minute: int, second: float) -> datetime.datetime:
    """2026-11-22, ``minute`` minutes and ``second`` seconds past 09:00 UTC."""
    start = datetime.datetime(2026, 11, 22, 9, 0, tzinfo=datetime.UTC)
    return start + datetime.timedelta(minutes=minute, seconds=second)


async def load_waits(tmp_path: Path, clock: Clock) -> list[str]:
    """What `before_load` tells, loading the recorded session with ``clock``."""
    run = Materialized(RECORDINGS / "0.61.0" / "plain_answer" / "stream-json", tmp_path)
    assert [p.name for p in run.session_files()] == ["session-2026-11-22T09-31-1463b159.jsonl"]
    told: list[str] = []
    quirks = GeminiCliQuirks(now=clock, sleep=clock.sleep)
    environment = {"GEMINI_CLI_HOME": str(run.home)}
    await quirks.before_load(environment, str(run.workspace), SESSION, told.append)
    return told


async def test_a_load_in_the_minute_of_the_sessions_file_waits_for_the_next(
    tmp_path: Path,
) -> None:
    # Loaded at 09:31, Gemini CLI appended its new recording to the session's own file
    # (same name), whose `$set` of the messages wiped the history: data lost.
    clock = Clock(utc(31, 42.5))
    told = await load_waits(tmp_path, clock)
    assert clock.slept == [17.55]
    assert clock.now == utc(32, 0.05)
    assert told == [
        (
            f"waiting 18 s to load session {SESSION}: Gemini CLI would record the load in the "
            "session's own file (session-2026-11-22T09-31-1463b159.jsonl, named for this "
            "minute) and reset its history"
        )
    ]


@pytest.mark.parametrize("now", [utc(32, 0), utc(30, 59.9), utc(91, 5)])
async def test_a_load_in_another_minute_goes_at_once(
    tmp_path: Path, now: datetime.datetime
) -> None:
    clock = Clock(now)
    assert await load_waits(tmp_path, clock) == []
    assert clock.slept == []


async def test_gemini_waits_until_its_replay_has_been_quiet() -> None:
    clock = Clock(utc(0, 0))
    arrivals = [utc(0, 0.1), utc(0, 0.3)]  # replayed updates after the answer, at 0.1 and 0.3 s

    def updates() -> int:
        return sum(1 for at in arrivals if at <= clock.now)

    await GeminiCliQuirks(now=clock, sleep=clock.sleep).settle_replay(updates)
    assert clock.slept == [REPLAY_SETTLE] * 3  # until 0.5-0.75 s was quiet


GEMINI_NOT_FOUND = (
    'Invalid session identifier "0badc0de-0000-0000-0000-000000000000".\n'
    "  Searched for sessions in /srv/home/.gemini/tmp/workspace/chats.\n"
    "  Use --list-sessions to see available sessions, then use --resume {number}, "
    "--resume {uuid}, or --resume latest."
)
"""What Gemini CLI 0.61.0 answers a ``session/load`` of a session it has not (as
``data.details`` of -32603 "Internal error")."""


def test_geminis_no_such_session_names_gemwires_listing_not_geminis_flags() -> None:
    error = AgentRequestFailed(
        "Internal error", method="session/load", code=-32603, data={"details": GEMINI_NOT_FOUND}
    )
    said = GeminiCliQuirks().load_failed(error, "/srv/work", "0badc0de")
    assert (str(said), said.method, said.code, said.data) == (
        (
            "Gemini CLI has no session 0badc0de for /srv/work "
            "(`gemwire sessions list --project /srv/work` lists those it has)"
        ),
        "session/load",
        -32002,  # resource not found: kind input, as the docs have it
        None,
    )
    other = AgentRequestFailed("Internal error", method="session/load", code=-32603)
    assert GeminiCliQuirks().load_failed(other, "/srv/work", "0badc0de") is other
    assert NoQuirks().load_failed(error, "/srv/work", "0badc0de") is error


@pytest.mark.parametrize("name", ["scripted", "qwen-code", "claude-code-acp", "codex-acp"])
async def test_other_agents_load_without_waiting(name: str) -> None:
    # Every agent's load waited for 0.25-5 s of quiet after its answer: Gemini's rule.
    async def loaded(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params["sessionId"]  # the history first, as the schema has it
        await agent.update(session_id, "user_message_chunk", content={"type": "text", "text": "a"})
        await agent.say(session_id, "b")
        return {}

    async with scripted_client(
        # "all": codex-acp 0.16 is made to ask only when gemwire starts it (asking.py).
        AcpOptions(permissions="all"),
        scenario=AgentScenario(
            agent_info=acp.Implementation(name=name, version="1.0"),
            agent_capabilities=acp.AgentCapabilities(load_session=True),
        ),
        methods={"session/load": loaded},
    ) as (client, _):
        started = anyio.current_time()
        session = await client.load_session("old", cwd="/")
        assert anyio.current_time() - started == 0  # virtual time: no sleep at all
        replayed = session.take_events()
    assert [(type(e), e.replay) for e in replayed[1:]] == [
        (UserMessage, True),
        (MessageDelta, True),
    ]
