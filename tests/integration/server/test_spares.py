"""Agents started ahead (`SpareAgents`), as processes: a session is handed a running agent,
the next one starts behind it, and none is left running after its session or the server
ends."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import anyio
import pytest

from gemwire.runners.acp import AcpClient
from gemwire.server.agents import ProcessLauncher
from gemwire.server.spares import SpareAgents

pytestmark = pytest.mark.anyio

# An ACP agent that notes its pid in a file named after it, then answers initialize and
# session/new; named and moded as gemwire's scripted agent, which gemwire knows asks in
# "default" (a server session is made to ask).
AGENT = r"""
import json, os, sys
open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
sessions = 0
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": 1, "agentCapabilities": {},
            "agentInfo": {"name": "scripted", "version": "1"}}}), flush=True)
    elif message.get("method") == "session/new":
        sessions += 1
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "sessionId": "s-%d-%d" % (os.getpid(), sessions),
            "modes": {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Ask"}]}}}), flush=True)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text()


async def started(folder: Path, count: int) -> list[int]:
    """The pids of the first ``count`` agents, once that many have started."""
    with anyio.fail_after(30):
        # Other processes write these files: nothing here could set an event.
        while len(pids := sorted(int(p.name) for p in folder.iterdir())) < count:  # noqa: ASYNC110, ASYNC240
            await anyio.sleep(0.02)
    return pids


def launcher(tmp_path: Path) -> tuple[ProcessLauncher, Path]:
    script, pids = tmp_path / "agent.py", tmp_path / "pids"
    script.write_text(AGENT)
    pids.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "GEMWIRE_TOKEN"}
    return ProcessLauncher(
        {"mini": (sys.executable, str(script), str(pids))}, environ=environ
    ), pids


async def primed(spares: SpareAgents) -> None:
    with anyio.fail_after(30):
        while "mini" not in spares._ready:  # noqa: ASYNC110 - a process answers it
            await anyio.sleep(0.02)


async def test_a_session_gets_the_spare_and_the_next_one_starts(tmp_path: Path) -> None:
    processes, pids = launcher(tmp_path)
    workspace = tmp_path / "work"
    workspace.mkdir()
    async with SpareAgents(processes, ["mini"], str(tmp_path)) as spares:
        [first] = await started(pids, 1)  # before any session asked for it
        await primed(spares)
        # The session opened ahead (in the root), then one in another folder: each
        # answered by its spare, over a pipe.
        for cwd in (tmp_path, workspace):
            options = spares.options("mini", str(cwd))
            async with AcpClient(options, channel=spares.session_channel(options)) as client:
                session = await client.new_session(cwd=str(cwd))
                number = 1 if cwd == tmp_path else 2  # another folder: a second session
                assert (client.agent, session.session_id) == ("acp:scripted", f"s-{first}-{number}")
                assert [e.type for e in client.take_events()] == ["session_started"]
            # Its session ended (it had no prompt to answer): the agent with it, and the
            # next spare starts.
            *_, second = await started(pids, 2 if cwd == tmp_path else 3)
            assert (alive(first), alive(second)) == (False, True)
            await primed(spares)
            first = second
    assert not alive(second)  # the server ended: so did its spare


async def test_a_spare_that_ended_waiting_is_never_handed_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    processes, pids = launcher(tmp_path)
    with caplog.at_level(logging.WARNING, logger="gemwire.server"):
        async with SpareAgents(processes, ["mini"], str(tmp_path)) as spares:
            [first] = await started(pids, 1)
            await primed(spares)
            os.kill(first, 9)
            with anyio.fail_after(30):
                while "mini" in spares._ready:  # noqa: ASYNC110 - it reads the agent's end
                    await anyio.sleep(0.02)
            options = spares.options("mini", str(tmp_path))
            async with AcpClient(options, channel=spares.session_channel(options)) as client:
                assert client.agent == "acp:scripted"  # a fresh agent answered
            assert len(await started(pids, 2)) == 2  # and no spare after a broken one
            assert "mini" not in spares._ready
    assert caplog.messages == [
        "gemwire serve: the spare mini agent ended before a session used it: exit code -9"
    ]


async def test_an_agent_that_cannot_start_is_no_spare_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    processes, _ = launcher(tmp_path)
    with caplog.at_level(logging.WARNING, logger="gemwire.server"):
        async with SpareAgents(processes, ["nope"], str(tmp_path)):
            await anyio.wait_all_tasks_blocked()
    assert caplog.messages == [
        (
            "gemwire serve: no spare nope agent: unknown agent 'nope'; known: gemini, claude, "
            "codex, qwen, opencode, mini"
        )
    ]
