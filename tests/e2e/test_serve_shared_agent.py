"""``gemwire serve --sessions-per-agent 3`` with the real ``gemini --acp`` 0.61.0 (scripted
model): three sessions, in two folders, on one agent process, each prompt answered in its
own session; deleting them ends the process."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from kit.serve_process import Server, completed_turns, event, sse

from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def test_one_gemini_serves_three_sessions(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text(f"Answer {n}.")]) for n in range(3)])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        other = env.workspace / "other"
        other.mkdir()
        server = Server(env, tmp_path / "state", ["--sessions-per-agent", "3"])
        try:
            with anyio.fail_after(180):
                sids = []
                for cwd in (env.workspace, other, env.workspace):
                    made = await server.post("/v1/sessions", {"agent": "gemini", "cwd": str(cwd)})
                    assert made.status_code == 201, made.text
                    sids.append(made.json()["id"])
                agents = set(env.live_processes(settle=0)) - {server.process.pid}
                answers = []
                for sid in sids:
                    async with sse(server, f"/v1/sessions/{sid}/events") as live:
                        await server.post(f"/v1/sessions/{sid}/prompt", {"text": "go"})
                        await live.until(event("turn_completed"))
                        answers.append([t["answer"] for t in completed_turns(live.envelopes)])
                for sid in sids:
                    assert (await server.http.delete(f"/v1/sessions/{sid}")).status_code == 200
                # The process ended with its last session: only the server is left.
                assert env.live_processes() == [server.process.pid]
        finally:
            await server.close()
    assert answers == [["Answer 0."], ["Answer 1."], ["Answer 2."]]
    # One gemini for the three (it relaunches itself once: two processes), not three.
    assert 0 < len(agents) <= 2
