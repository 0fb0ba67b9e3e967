"""``gemwire serve`` as a process with the other agents: Codex, Qwen Code, OpenCode and
Antigravity (the real pinned ones, scripted model), an agent given as ``--agent NAME=COMMAND``, and
sessions at once over one server, each its own agent process, none hearing another's.

One plain prompt each: a session over HTTP, the turn over SSE, its answer; then SIGTERM
leaves no agent behind (`live_processes`).
"""

from __future__ import annotations

import shlex
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.serve_process import Server, completed_turns, event, sse

from gemwire.runners.agents import resolve_agent
from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

ECHO_AGENT = Path(__file__).parents[1] / "fixtures" / "acp_sdk" / "echo_agent.py.txt"
"""The ACP Python SDK's example echo agent: an agent we did not write, light to start."""


def runs_echo_agent(pid: int) -> bool:
    """Whether ``pid`` is an echo agent itself (not the reaper that started it)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # exited meanwhile
        return False
    return argv[1:2] == [str(ECHO_AGENT).encode()]


async def one_prompt(server: Server, agent: str, text: str) -> dict[str, Any]:
    """A new session of ``agent``, ``text`` prompted: its ``turn_completed``."""
    created = await server.post("/v1/sessions", {"agent": agent})
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    async with sse(server, f"/v1/sessions/{sid}/events") as stream:
        prompted = await server.post(f"/v1/sessions/{sid}/prompt", {"text": text})
        assert prompted.status_code == 202, prompted.text
        done: dict[str, Any] = (await stream.until(event("turn_completed")))["event"]
    assert stream.ids == list(range(1, len(stream.ids) + 1))
    assert completed_turns(stream.envelopes) == [done]
    return done


@pytest.mark.parametrize("agent", ["codex", "qwen", "opencode", "antigravity"])
async def test_serve_runs_each_built_in_agent(tmp_path: Path, agent: str) -> None:
    answer = f"Hello from {agent}."
    with ScriptedModel(Scenario(turns=[Reply([Text(answer)])])) as model:
        env = isolated_agent(agent, model, root=tmp_path)  # type: ignore[arg-type]
        server = Server(env, tmp_path / "state")
        try:
            with anyio.fail_after(240):
                done = await one_prompt(server, agent, "say hello")
                code, stderr = await server.stop()
            assert code == 0, stderr
            assert (done["ok"], done["answer"]) == (True, answer)
            assert env.live_processes() == []
        finally:
            await server.close()
    assert model.problems == []


async def test_serve_runs_an_agent_given_by_its_command(tmp_path: Path) -> None:
    command = shlex.join(resolve_agent("qwen").command)  # the pinned Qwen Code, by its path
    with ScriptedModel(Scenario(turns=[Reply([Text("Mine answers.")])])) as model:
        env = isolated_agent("qwen", model, root=tmp_path)
        server = Server(env, tmp_path / "state", ["--agent", f"mine={command}"])
        try:
            with anyio.fail_after(240):
                listed = (await server.http.get("/v1/agents")).json()
                done = await one_prompt(server, "mine", "say it")
                code, stderr = await server.stop()
            assert code == 0, stderr
            assert [a["name"] for a in listed][-1] == "mine"
            assert (done["ok"], done["answer"], done["agent"]) == (
                True,
                "Mine answers.",
                "acp:qwen-code",
            )
            assert env.live_processes() == []
        finally:
            await server.close()


async def test_sessions_at_once_hear_only_their_own(tmp_path: Path) -> None:
    # Four, each its own process, all prompted at once on two cores: any two crossing would
    # show, and nothing in the server pools them (--max-sessions is set to their number).
    # Twenty at once without processes: tests/unit/server/test_sessions_api.py. Twenty here
    # cost 47 CPU-s, an echo agent (Python and the ACP SDK) being 1.5 of them.
    sessions = 4
    command = shlex.join([sys.executable, str(ECHO_AGENT)])
    env = IsolatedGemini("http://127.0.0.1:9", root=tmp_path)  # a home and a tag; no model
    args = ["--agent", f"echo={command}", "--max-sessions", str(sessions)]
    args += ["--sessions-per-agent", "1"]  # a process a session: each its own echo
    server = Server(env, tmp_path / "state", args)
    texts = [f"session {n}: {uuid.uuid4().hex}" for n in range(sessions)]
    answers: list[str | None] = [None] * sessions
    heard: list[list[str]] = [[] for _ in range(sessions)]
    agents: list[int] = []
    try:
        with anyio.fail_after(240):
            # An agent gemwire does not know the modes of runs when its sessions allow
            # everything (its echo asks nothing).
            body = {"agent": "echo", "permissions": "all"}
            created = [await server.post("/v1/sessions", body) for _ in texts]
            assert [c.status_code for c in created] == [201] * sessions
            ids = [c.json()["id"] for c in created]
            # Each session is an agent process of its own.
            agents = [p for p in env.live_processes(settle=0) if runs_echo_agent(p)]

            async def one(n: int) -> None:
                path = f"/v1/sessions/{ids[n]}/events"
                async with sse(server, path) as stream:
                    prompted = await server.post(
                        f"/v1/sessions/{ids[n]}/prompt", {"text": texts[n]}
                    )
                    assert prompted.status_code == 202
                    answers[n] = (await stream.until(event("turn_completed")))["event"]["answer"]
                heard[n] = [
                    e["event"]["text"]
                    for e in stream.envelopes
                    if e.get("event", {}).get("type") in ("user_message", "message_delta")
                ]

            async with anyio.create_task_group() as tg:
                for n in range(sessions):
                    tg.start_soon(one, n)
            code, stderr = await server.stop()
        assert code == 0, stderr
        assert "Traceback" not in stderr
        assert len(agents) == sessions
        assert answers == texts
        assert heard == [[text, text] for text in texts]  # the prompt, its echo: no other
        assert env.live_processes() == []
    finally:
        await server.close()
