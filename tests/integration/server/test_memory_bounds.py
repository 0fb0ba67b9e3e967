"""Memory that does not grow: a subscriber that never takes pins a bounded buffer (RSS
measured in a subprocess), and a stopped or closed session keeps nothing of its agent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import scripted_server

from gemwire.testing import ScriptedAgent

STALLED = r"""
import sys
import anyio
from gemwire.server.store import EventLog
from gemwire.server.streams import EventStream

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

async def main():
    log = EventLog(sys.argv[1])
    stream = EventStream(log)
    subscription = stream.subscribe(0)
    took = anyio.Event()

    async def stalled_client():
        await subscription.next_batch()  # following live from here
        took.set()
        await anyio.sleep_forever()  # then blocked, as on a socket nobody reads

    async with anyio.create_task_group() as tg:
        tg.start_soon(stalled_client)
        before = rss_mb()
        for seq in range(1, 41):  # 40 envelopes of 2 MB, as large tool outputs
            envelope = b'{"seq":%d,"event":{"text":"%b"}}' % (seq, b"x" * (2 << 20))
            log.append(seq, envelope)
            stream.publish(seq, envelope)
            if seq == 1:
                await took.wait()
        print(round(rss_mb() - before))
        tg.cancel_scope.cancel()

anyio.run(main)
"""


def test_a_subscriber_that_never_takes_pins_a_bounded_buffer(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", STALLED, str(tmp_path / "events.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    )
    grown = int(done.stdout)
    # 80 MB when it kept up to 1,024 envelopes of any size; now 4 MiB of them at most.
    assert grown < 20, f"{grown} MB"


async def say_hello(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, "Hello")
    return "end_turn"


@pytest.mark.anyio
async def test_stopped_and_closed_sessions_keep_nothing_of_their_agent(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    root, state = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(root, state, say_hello, idle_timeout=0.2) as (server, _):
        manager = server.app.state.gemwire.sessions
        ids = []
        for _ in range(2):
            response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
            ids.append(response.json()["id"])
            await server.request("POST", f"/v1/sessions/{ids[-1]}/prompt", json={"text": "hi"})
        stopped, closed = (manager.get(sid) for sid in ids)
        await server.request("DELETE", f"/v1/sessions/{closed.id}")
        with anyio.fail_after(10):
            await stopped.agent_done.wait()  # idle timeout
        for session in (stopped, closed):
            assert (session.acp, session.client, session.tg, session.between_turns) == (
                None,
                None,
                None,
                None,
            )
        assert (stopped.status, closed.status) == ("stopped", "closed")
