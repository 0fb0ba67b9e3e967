"""``gemwire serve`` as a process, driving the real ``gemini --acp`` 0.61.0 (scripted model).

One story, over HTTP only: a session is created, a prompt asks to write a file, the
permission is answered over HTTP, the file is on disk; a turn is cancelled mid-way; a
dropped SSE connection resumes with ``after=N`` and gets every envelope exactly once;
SIGTERM mid-turn ends that turn with one ``turn_completed``, stops every agent and exits
0; a restarted server lists the session and continues it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
from kit.budget import load
from kit.docs_shell import ROOT, served_shell
from kit.ports import free_port
from kit.serve_process import TOKEN, Server, completed_turns, event, sse

from gemwire.testing import FunctionCall, Hang, IsolatedGemini, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.environment import live_processes

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def test_serve_over_http_with_the_real_gemini(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("write_file", {"file_path": "hello.txt", "content": "hi\n"})]),
            Reply([Text("Done.")]),
            Reply([Text("Working on it"), Hang()]),
            Reply([Text("Still working"), Hang()]),
            Reply([Text("Back again.")]),
        ]
    )
    state = tmp_path / "state"
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        server = Server(env, state)
        try:
            with anyio.fail_after(240):
                sid, last_turn = await first_server(server, env)
                # SIGTERM with a turn running and two clients following it.
                path = f"/v1/sessions/{sid}"
                ws: AsyncWebSocketSession
                async with (
                    sse(server, f"{path}/events?after={last_turn}") as live,
                    aconnect_ws(f"{server.base}{path}/ws?after={last_turn}", server.http) as ws,
                ):
                    await server.post(f"{path}/prompt", {"text": "more"})
                    await live.until(event("message_delta", text="Still working"))
                    code, stderr = await server.stop()
                    with pytest.raises(WebSocketDisconnect) as closed:  # noqa: PT012
                        while True:
                            await ws.receive_text()
                    with anyio.fail_after(5):
                        await live.ended.wait()  # the SSE stream ended
                await server.close()
                assert closed.value.code == 1001
                assert code == 0, stderr
                assert TOKEN not in stderr
                assert env.live_processes() == []
                log = state / "sessions" / sid / "events.jsonl"
                logged = [json.loads(line) for line in log.read_text().splitlines()]
                assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
                turns = completed_turns(logged)
                assert [t["stop_reason"] for t in turns] == ["end_turn", "cancelled", "cancelled"]
                assert turns[-1]["answer"] == "Still working"
                assert logged[-1]["state"] == {"status": "stopped", "detail": "server shutdown"}
                assert [e["seq"] for e in logged if event("turn_completed")(e)][-1] > last_turn

                # Gemini CLI 0.61.0 cannot load a session within the minute it started
                # (test_acp_gemini.py, test_load_a_previous_session_replays_it_flagged):
                # make it an older one.
                agent_session = logged[1]["event"]["session_id"]
                (saved,) = [p for p in env.session_files() if agent_session[:8] in p.name]
                saved.rename(saved.with_name(f"session-2020-01-01T00-00-{agent_session[:8]}.jsonl"))

                server = Server(env, state)
                await second_server(server, sid, len(logged))
                code, _ = await server.stop()
                await server.close()
                assert code == 0
                assert env.live_processes() == []
        finally:
            await server.close()


async def first_server(server: Server, env: IsolatedGemini) -> tuple[str, int]:
    created = await server.post("/v1/sessions", {"agent": "gemini"})
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    assert created.json()["cwd"] == str(env.workspace)

    # A permission answered over HTTP; the file is written.
    async with sse(server, f"/v1/sessions/{sid}/events") as stream:
        prompted = await server.post(f"/v1/sessions/{sid}/prompt", {"text": "write hello.txt"})
        assert prompted.status_code == 202
        requested = (await stream.until(event("permission_requested")))["event"]
        assert "proceed_once" in [o["option_id"] for o in requested["options"]]
        url = f"/v1/sessions/{sid}/permissions/{requested['request_id']}"
        assert (await server.post(url, {"option_id": "not-offered"})).status_code == 400
        answered = await server.post(url, {"option_id": "proceed_once"})
        assert answered.status_code == 200
        first = (await stream.until(event("turn_completed")))["event"]
        assert (first["ok"], first["answer"]) == (True, "Done.")
        changed = (await stream.until(event("file_changed")))["event"]
        assert (changed["path"], changed["change"]) == (str(env.workspace / "hello.txt"), "created")
        assert (env.workspace / "hello.txt").read_text() == "hi\n"
        resolved = (await stream.until(event("permission_resolved")))["event"]
        assert resolved["option_id"] == "proceed_once"
        first_done = stream.ids[stream.envelopes.index(await stream.until(event("turn_completed")))]

        # Cancel mid-turn.
        await server.post(f"/v1/sessions/{sid}/prompt", {"text": "work"})
        await stream.until(event("message_delta", text="Working on it"))
        assert (await server.post(f"/v1/sessions/{sid}/cancel")).status_code == 202
        await stream.until(lambda e: len(completed_turns(stream.envelopes)) == 2)
        seen = list(stream.ids)
    assert completed_turns(stream.envelopes)[1]["stop_reason"] == "cancelled"
    assert seen == list(range(1, len(seen) + 1))

    # Dropped; reconnected from the first turn's end: each envelope once, in order.
    async with sse(server, f"/v1/sessions/{sid}/events?after={first_done}") as again:
        await again.until(lambda e: again.ids[-1] == seen[-1])
    assert again.ids == list(range(first_done + 1, seen[-1] + 1))
    assert again.envelopes == stream.envelopes[first_done:]
    return sid, seen[-1]


async def second_server(server: Server, sid: str, last_seq: int) -> None:
    listed = (await server.http.get("/v1/sessions")).json()["sessions"]
    assert [(s["id"], s["status"], s["last_seq"]) for s in listed] == [(sid, "stopped", last_seq)]
    async with sse(server, f"/v1/sessions/{sid}/events?after={last_seq}") as stream:
        prompted = await server.post(f"/v1/sessions/{sid}/prompt", {"text": "again"})
        assert prompted.status_code == 202, prompted.text
        done = (await stream.until(event("turn_completed")))["event"]
    assert (done["ok"], done["answer"]) == (True, "Back again.")
    # A WebSocket message over the stdio line cap (64 MiB) closes the socket with 1009.
    code = None
    ws: AsyncWebSocketSession
    async with aconnect_ws(f"{server.base}/v1/sessions/{sid}/ws", server.http) as ws:
        await ws.send_text("x" * (64 * 1024 * 1024 + 1))
        try:
            while True:
                await ws.receive_text()
        except WebSocketDisconnect as exc:
            code = exc.code
    assert code == 1009
    assert stream.ids == list(range(last_seq + 1, stream.ids[-1] + 1))
    assert not any(e.get("event", {}).get("replay") for e in stream.envelopes)


def test_the_readme_example_runs_in_the_shell_the_docs_set_up(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Run agents behind a server") :]
    block = section[section.index("```sh\n") + 6 : section.index("\n```\n")]
    # The documented port, made one nothing else binds: a parallel run of the suite runs
    # this example too.
    port = free_port()
    block = block.replace("8765", str(port))
    # The SSE stream (`curl -N`) follows for ever (the reader stops it with Ctrl-C): here, for
    # 5 s, more on a loaded machine (the turn must end within it); the other calls run out.
    follow = round(5 * max(1.0, load()))
    sse = f'*" -N "*) command curl --max-time {follow} "$@";;'
    script = f'curl() {{ case " $* " in {sse} *) command curl "$@";; esac; }}\n' + block
    with served_shell(tmp_path) as shell:
        environ = {k: v for k, v in shell.env.items() if k != "GEMWIRE_TOKEN"}
        result = subprocess.run(
            ["bash", "-c", f"set -m\n{script}\nwait"],
            cwd=shell.cwd,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        # `kill %1` stopped the server, and it its agent.
        assert live_processes(f"GEMINI_CLI_HOME={shell.env['GEMINI_CLI_HOME']}", 10) == []
    lines = result.stdout.splitlines()
    assert lines, result.stderr
    assert lines[0] == f"gemwire serve: http://127.0.0.1:{port}/?token=demo-token"
    assert lines[1] == '{"after":4}: gemwire'  # curl adds no newline; the SSE stream opens
    envelopes = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    types = [e["event"]["type"] for e in envelopes if "event" in e]
    assert types == ["user_message", "message_delta", "usage", "turn_completed"]
    assert envelopes[-2]["event"]["answer"] == "Done."
    assert lines[-2:-1] == ["Done."]  # gemwire acp --connect, through /acp/gemini
    assert "Traceback" not in result.stderr


async def test_a_gemini_stream_session_resumes_the_cli_session(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text("One.")]), Reply([Text("Two.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        server = Server(env, tmp_path / "state")
        try:
            with anyio.fail_after(120):
                agents = (await server.http.get("/v1/agents")).json()
                assert [a["available"] for a in agents if a["name"] == "gemini-stream"] == [True]
                created = await server.post("/v1/sessions", {"agent": "gemini-stream"})
                assert created.status_code == 201, created.text
                sid = created.json()["id"]
                answers, sessions = [], []
                for text in ("first", "second"):
                    async with sse(server, f"/v1/sessions/{sid}/events") as stream:
                        prompted = await server.post(f"/v1/sessions/{sid}/prompt", {"text": text})
                        assert prompted.status_code == 202
                        seq = prompted.json()["after"]
                        await stream.until(
                            lambda e, seq=seq: e["seq"] > seq and event("turn_completed")(e)
                        )
                    done = completed_turns(stream.envelopes)[-1]
                    answers.append(done["answer"])
                    sessions.append(done["session_id"])
                code, _ = await server.stop()
            assert code == 0
            assert answers == ["One.", "Two."]
            assert sessions[0] is not None
            assert sessions[0] == sessions[1]  # resumed
            assert env.live_processes() == []
        finally:
            await server.close()


async def test_a_warm_session_is_answered_and_nothing_is_left(tmp_path: Path) -> None:
    """``--warm gemini``: a session of the root and one in another folder are answered,
    each on a spare once Gemini CLI has opened the spare's session (the second's
    session/new goes to the agent), or on an agent of its own if the spare was still
    being primed (nothing outside says when it is); SIGTERM stops every agent, the waiting
    spare included. The unit tests (test_spares_primed.py) show which requests a spare
    answers itself."""
    scenario = Scenario(turns=[Reply([Text("Warm hello.")]), Reply([Text("Elsewhere.")])])
    other = tmp_path / "workspace" / "other"
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        other.mkdir()
        server = Server(env, tmp_path / "state", ["--warm", "gemini"])
        try:
            with anyio.fail_after(180):
                answers = []
                for spares, cwd, text in ((1, None, "hello"), (2, str(other), "there")):
                    # Gemini CLI writes a session's file at session/new: a spare got that far.
                    while len(env.session_files()) < spares:  # noqa: ASYNC110 - it writes it
                        await anyio.sleep(0.05)
                    created = await server.post("/v1/sessions", {"agent": "gemini", "cwd": cwd})
                    assert created.status_code == 201, created.text
                    assert created.json()["cwd"] == (cwd or str(env.workspace))
                    sid = created.json()["id"]
                    async with sse(server, f"/v1/sessions/{sid}/events") as stream:
                        prompted = await server.post(f"/v1/sessions/{sid}/prompt", {"text": text})
                        assert prompted.status_code == 202, prompted.text
                        done = (await stream.until(event("turn_completed")))["event"]
                    answers.append((done["ok"], done["answer"]))
                    kinds = [e["event"]["type"] for e in stream.envelopes if "event" in e]
                    assert {"notice", "unknown"}.isdisjoint(kinds), stream.envelopes
                code, stderr = await server.stop()
            assert answers == [(True, "Warm hello."), (True, "Elsewhere.")]
            assert code == 0, stderr
            assert "spare" not in stderr, stderr  # none ended or failed
            assert env.live_processes() == []
        finally:
            await server.close()
