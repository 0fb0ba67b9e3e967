"""What putting an agent behind ``gemwire serve`` costs, measured against no server, in one run.

    .venv/bin/python bench/serve.py [--runs 5] [--sessions 20] [--events 500] [--pace-ms 10]
                                    [--idle 50] [--sessions-per-agent 20] [--profile FILE]
                                    [--settle 3]

1. First answer: a new session on a running server whose agent is already warm, from
   ``POST /v1/sessions`` to the first ``message_delta`` read from the session's SSE stream,
   against a cold ``gemini -p`` (``run_gemini``, process start to its first
   ``message_delta``) on the same prompt. The pinned Gemini CLI 0.61.0 against the scripted
   model, medians of ``--runs``, each ``--settle`` seconds after the last (the next spare is
   up, and the cold run does not share the machine with one starting).
2. Latency per event, agent to SSE client, with ``--sessions`` sessions streaming at once,
   ``--runs`` times: a stand-in ACP agent (a few lines of Python, in ``served.py``) writes
   ``--events`` message chunks a turn, each stamped with CLOCK_MONOTONIC (shared by all
   processes on Linux), paced ``--pace-ms`` apart (10 ms: 100 chunks a second a session,
   faster than a model streams). One thread writes every turn's chunks, pre-encoded, those
   due at once in one write: sessions sharing a process stream at once, and the stand-in
   costs little an event (20 threads, a ``json.dumps`` and a write each, had a p99 of
   11-17 ms alone, and the bench measured them more than the server).
   Every session is made and followed first, then all are prompted at once: the agents'
   start is not timed. Each client notes when each event reaches it (SSE read off the
   socket, as little work as can be). In the same run, the baseline: the same stand-ins
   (as many processes) read by this process straight from their stdout, no server. Each
   run's p50 / p99 / max both ways, the server's CPU an event, then the median p99 of the
   runs, its spread, and the median ratio to the baseline. ``--profile`` runs the server
   under cProfile (CPU time), written to FILE when it exits.
3. Server memory per idle session: the server's resident memory (VmRSS) after ``--idle``
   idle sessions of the stand-in agent, less before, divided by their number (the agents'
   own memory is theirs, in their processes).
4. Catching up on a long log: a session whose log holds ``--replay`` envelopes of about
   500 bytes (written into the state folder before the server starts) read whole over SSE
   from ``?after=0``, while another client asks ``/health`` every 50 ms: the time to read
   it, and the slowest ``/health`` meanwhile (the server must keep answering).

5. The server's own steps an event, in this process without HTTP or an agent: a
   ``message_delta`` masked, put in its envelope, appended to the log and offered to one
   subscriber (``LiveSession.publish_event``), ``--events`` times 100; CPU time an event.

``--parts`` picks which (default all; the first needs the pinned Gemini CLI). The server as
a process, the stand-in agent and the latency part live in ``served.py`` beside this.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from served import TOKEN, Server, direct_latencies, latencies, stand_in

from gemwire import run_gemini
from gemwire.events import MessageDelta
from gemwire.server.config import ServerConfig
from gemwire.server.live_session import LiveSession
from gemwire.server.store import EventLog, SessionRecord
from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text

PROMPT = "say hello"


async def first_answer_served(server: Server, cwd: Path) -> float:
    started = time.monotonic()
    session_id = await server.new_session("gemini", cwd)
    async with server.events(session_id) as events:
        response = await server.http.post(
            f"/v1/sessions/{session_id}/prompt", json={"text": PROMPT}
        )
        assert response.status_code == 202, response.text
        async for event in events:
            if event["type"] == "message_delta":
                elapsed = time.monotonic() - started
            if event["type"] == "turn_completed":
                break
    await server.http.delete(f"/v1/sessions/{session_id}")
    return elapsed


async def first_answer_cold(env: IsolatedGemini) -> float:
    started = time.monotonic()
    first = None
    async with run_gemini(PROMPT, env.gemini_options()) as run:
        async for event in run:
            if first is None and isinstance(event, MessageDelta):
                first = time.monotonic() - started
    assert run.result.ok, run.result.error
    assert first is not None
    return first


async def first_answer(runs: int, settle: float) -> tuple[list[float], list[float]]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModel(
            Scenario(turns=[Reply([Text("Hello.")]) for _ in range(4 * runs + 2)])
        ) as model,
        IsolatedGemini(model.url, root=Path(tmp)) as env,
    ):
        server = Server(
            ["--root", str(env.workspace), "--state-dir", f"{tmp}/state", "--warm", "gemini"],
            env.environ(),
            env.workspace,
        )
        try:
            await first_answer_served(server, env.workspace)  # the first agent was cold
            served, cold = [], []
            for _ in range(runs):
                await anyio.sleep(settle)  # a spare starts and is primed in about 1 s
                served.append(await first_answer_served(server, env.workspace))
                await anyio.sleep(settle)
                cold.append(await first_answer_cold(env))
        finally:
            await server.close()
        return served, cold


async def idle_memory(idle: int) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        args, env = stand_in(tmp, 1, 0)
        work = Path(tmp, "work")
        server = Server(args, env, work)
        try:
            # One session first: what every session shares (imports, the agent's spec) is paid.
            await server.new_session("stamped", work)
            await anyio.sleep(1)
            before = server.rss()
            for _ in range(idle):
                await server.new_session("stamped", work)
            await anyio.sleep(1)
            return before, server.rss()
        finally:
            await server.close()


def long_log(state: Path, cwd: Path, events: int) -> tuple[str, int]:
    """A stopped session in ``state`` whose log holds ``events`` envelopes: its id, and
    the log's size."""
    session_id = "s_" + "0" * 16
    folder = state / "sessions" / session_id
    folder.mkdir(parents=True)
    record = {
        "id": session_id,
        "agent": "stamped",
        "cwd": str(cwd),
        "created": "2026-01-01T00:00:00Z",
    }
    (folder / "session.json").write_text(json.dumps(record))
    text = "x" * 420
    with (folder / "events.jsonl").open("w") as log:
        for seq in range(1, events + 1):
            event = {
                "type": "message_delta",
                "agent": "acp:stamped",
                "session_id": "s",
                "text": text,
            }
            log.write(json.dumps({"seq": seq, "event": event}, separators=(",", ":")) + "\n")
        return session_id, log.tell()


async def replay(events: int) -> tuple[float, float, int]:
    """Seconds to read a log of ``events`` over SSE, the slowest /health meanwhile, and
    the log's size."""
    with tempfile.TemporaryDirectory() as tmp:
        args, env = stand_in(tmp, 1, 0)
        session_id, size = long_log(Path(tmp, "state"), Path(tmp, "work"), events)
        server = Server(args, env, Path(tmp, "work"))
        slowest = 0.0
        try:
            read = anyio.Event()

            async def health() -> None:
                nonlocal slowest
                while not read.is_set():
                    started = time.monotonic()
                    assert (await server.http.get("/health")).status_code == 200
                    slowest = max(slowest, time.monotonic() - started)
                    await anyio.sleep(0.05)

            async with anyio.create_task_group() as tg:
                tg.start_soon(health)
                started = time.monotonic()
                seen = 0
                async with server.events(session_id) as stream:
                    async for _ in stream:
                        seen += 1
                        if seen == events:
                            break
                took = time.monotonic() - started
                read.set()
        finally:
            await server.close()
        return took, slowest, size


def own_steps(events: int) -> float:
    """CPU seconds an event of `LiveSession.publish_event`, one subscriber following."""
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(host="127.0.0.1", port=1, token=TOKEN, roots=(tmp,), state_dir=tmp)
        record = SessionRecord(id="s_" + "0" * 16, agent="stamped", cwd=tmp, created="-")
        session = LiveSession(config, record, EventLog(os.path.join(tmp, "events.jsonl")))
        subscription = session.subscribe(0)
        delta = MessageDelta(agent="acp:stamped", session_id="s-1", text=str(time.time_ns()))

        async def publish() -> float:
            session.publish_event(delta)
            await subscription.next_batch()  # read from the log: it follows live from here
            started = time.process_time()
            for _ in range(events):
                session.publish_event(delta)
                await subscription.next_batch()
            return (time.process_time() - started) / events

        try:
            return anyio.run(publish)
        finally:
            session.log.close()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def main(args: argparse.Namespace) -> None:
    parts = set(args.parts.split(","))
    if "first" in parts:
        served, cold = await first_answer(args.runs, args.settle)
        s, c = statistics.median(served), statistics.median(cold)
        print(
            f"first answer: warm server {s * 1000:.0f} ms, cold gemini -p {c * 1000:.0f} ms "
            f"(median of {args.runs}): {s / c:.3f}x   [target <= 0.05x]\n"
            f"  each run, warm: {' '.join(f'{x * 1000:.0f}' for x in served)} ms; "
            f"cold: {' '.join(f'{x * 1000:.0f}' for x in cold)} ms"
        )
    if "latency" in parts:
        served_p99, direct_p99 = [], []
        for _ in range(args.runs):  # each run: the baseline, then the server, back to back
            direct = await direct_latencies(
                args.sessions, args.events, args.pace_ms / 1000, args.sessions_per_agent
            )
            found, cpu = await latencies(
                args.sessions, args.events, args.pace_ms / 1000, args.sessions_per_agent,
                args.profile,
            )  # fmt: skip
            served_p99.append(percentile(found, 99))
            direct_p99.append(percentile(direct, 99))
            print(
                f"  run: served p50 {percentile(found, 50):.2f} p99 {served_p99[-1]:.2f} "
                f"max {max(found):.2f} ms; no server p50 {percentile(direct, 50):.2f} "
                f"p99 {direct_p99[-1]:.2f} max {max(direct):.2f} ms; "
                f"p99 ratio {served_p99[-1] / direct_p99[-1]:.2f}x; "
                f"server CPU {cpu * 1e6 / len(found):.0f} us an event",
                flush=True,
            )
        ratios = sorted(s / d for s, d in zip(served_p99, direct_p99, strict=True))
        print(
            f"latency agent -> SSE client, {args.sessions} sessions x {args.events} events "
            f"{args.pace_ms:g} ms apart, {args.sessions_per_agent} a process: p99 median "
            f"{statistics.median(served_p99):.2f} ms "
            f"({min(served_p99):.2f}-{max(served_p99):.2f} over {args.runs} runs), "
            f"no server {statistics.median(direct_p99):.2f} ms; served/no server "
            f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})   "
            f"[target p99 <= 5 ms]"
        )
    if "memory" in parts:
        before, after = await idle_memory(args.idle)
        print(
            f"server memory per idle session: {(after - before) / args.idle / 1024:.0f} KiB "
            f"({args.idle} sessions)   [target <= 1024 KiB]"
        )
    if "own" in parts:
        print(
            f"the server's own steps an event (mask, envelope, log, one subscriber): "
            f"{await anyio.to_thread.run_sync(own_steps, args.events * 100) * 1e6:.1f} us"
        )
    if "replay" in parts:
        took, slowest, size = await replay(args.replay)
        print(
            f"catching up on a log of {args.replay} envelopes ({size / 1e6:.0f} MB) over SSE: "
            f"{took:.1f} s; slowest /health meanwhile {slowest * 1000:.0f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--idle", type=int, default=50)
    parser.add_argument("--pace-ms", type=float, default=10.0)
    parser.add_argument("--sessions-per-agent", type=int, default=20)
    parser.add_argument("--profile", help="run the latency part's server under cProfile, to here")
    parser.add_argument("--replay", type=int, default=300_000)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--parts", default="first,latency,memory,replay,own")
    anyio.run(main, parser.parse_args())
