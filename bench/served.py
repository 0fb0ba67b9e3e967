"""The server as a process, the stand-in agent and the latency part of ``bench/serve.py``
(a helper of it, not a benchmark: ``from served import ...``, as ``rss.py``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx

__all__ = ("TOKEN", "Server", "direct_latencies", "latencies", "stand_in")

TOKEN = "bench-token-0123456789"
URL = re.compile(r"^gemwire serve: (http://127\.0\.0\.1:\d+)/\?token=(\S+)\n$")

STAMPED_AGENT = r"""
import heapq, json, os, sys, threading, time
EVENTS, PACE = int(sys.argv[1]), float(sys.argv[2])
OUT, TICK = sys.stdout.fileno(), int(PACE * 1e9) or 1
written, turns, due = threading.Lock(), threading.Condition(), []
def write(data):
    with written:
        while data:
            data = data[os.write(OUT, data):]
def send(message):
    write(json.dumps(message).encode() + b"\n")
def stream():  # one thread writes every turn's events: those due at once in one write
    while True:
        with turns:
            while not due:
                turns.wait()
            wait = due[0][0] - time.monotonic_ns()
            if wait > 0:
                turns.wait(wait / 1e9)
                continue
            now, frames = time.monotonic_ns(), []
            while due and due[0][0] <= now:
                at, head, ident, left = heapq.heappop(due)
                frames.append((head, ident, left))
                if left:
                    heapq.heappush(due, (at + TICK, head, ident, left - 1))
        stamp = b"%d" % time.monotonic_ns()
        write(b"".join(
            head + stamp + b'"}}}}\n' if left else
            b'{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}\n' % ident
            for head, ident, left in frames))
threading.Thread(target=stream, daemon=True).start()
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": 1,
              "agentCapabilities": {}, "agentInfo": {"name": "scripted", "version": "1"}}})
    elif method == "session/new":  # as the scripted agent, which gemwire knows asks in default
        send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "s-%d" % ident,
              "modes": {"currentModeId": "default", "availableModes": [{"id": "default"}]}}})
    elif method == "session/prompt":  # its first event now, then one every PACE
        head = (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%s,'
                b'"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text",'
                b'"text":"' % json.dumps(message["params"]["sessionId"]).encode())
        with turns:
            heapq.heappush(due, (time.monotonic_ns(), head, ident, EVENTS))
            turns.notify()
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
"""


PROFILED = """
import cProfile, runpy, sys, time
path, sys.argv = sys.argv[1], ["gemwire", *sys.argv[2:]]
profiler = cProfile.Profile(time.thread_time)
try:
    profiler.runcall(runpy.run_module, "gemwire", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    profiler.dump_stats(path)
"""
"""``python -c`` this, a path and ``gemwire``'s arguments: it, profiled."""


class Server:
    """A ``gemwire serve --port 0`` process and an HTTP client for it."""

    def __init__(
        self, args: Sequence[str], env: dict[str, str], cwd: Path, profile: str | None = None
    ) -> None:
        # Under cProfile when asked, timed by CPU, not the wall clock (on a loaded machine
        # the wall clock charges a call the time the server waited for a core); its figures
        # are written when the server exits.
        gemwire = ["-c", PROFILED, profile] if profile else ["-m", "gemwire"]
        self.process = subprocess.Popen(
            [sys.executable, *gemwire, "serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**env, "GEMWIRE_TOKEN": TOKEN},
            cwd=cwd,
        )
        assert self.process.stdout is not None
        match = URL.match(self.process.stdout.readline())
        assert match is not None, "gemwire serve did not print its URL"
        self.url = match.group(1)
        self.http = httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=120,
            limits=httpx.Limits(max_connections=200),
        )

    async def new_session(self, agent: str, cwd: Path) -> str:
        response = await self.http.post("/v1/sessions", json={"agent": agent, "cwd": str(cwd)})
        assert response.status_code == 201, response.text
        session_id: str = response.json()["id"]
        return session_id

    @asynccontextmanager
    async def events(self, session_id: str) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """The session's events as they come (SSE), from its start."""
        async with self.http.stream("GET", f"/v1/sessions/{session_id}/events") as response:
            assert response.status_code == 200

            async def envelopes() -> AsyncIterator[dict[str, Any]]:
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        envelope = json.loads(line[6:])
                        if "event" in envelope:
                            yield envelope["event"]

            yield envelopes()

    @asynccontextmanager
    async def stamps(self, session_id: str) -> AsyncIterator[AsyncIterator[bytes]]:
        """The ``text`` of the session's ``message_delta`` events as they come, and a last
        ``b""`` at its ``turn_completed``: SSE read off the socket with as little work as
        can be (HTTP/1.0, so the body is not chunked), as the stand-ins are read without a
        server. httpx's streaming cost 0.5 ms of this process's CPU an event: with 20
        sessions this process, not the server, set the pace."""
        host, port = self.url.removeprefix("http://").split(":")
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(
                f"GET /v1/sessions/{session_id}/events HTTP/1.0\r\nHost: {host}:{port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nAccept: text/event-stream\r\n\r\n".encode()
            )
            buffer = b""
            while b"\r\n\r\n" not in buffer:
                buffer += await stream.receive()
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 200"), head

            async def texts() -> AsyncIterator[bytes]:
                nonlocal buffer
                while True:
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.startswith(b"data: "):
                            event = json.loads(line[6:]).get("event", {})
                            if event.get("type") == "message_delta":
                                yield event["text"].encode()
                            elif event.get("type") == "turn_completed":
                                yield b""
                    buffer += await stream.receive()

            yield texts()

    def cpu(self) -> float:
        """Seconds of CPU the server process has used (user and system)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]

    async def close(self) -> None:
        await self.http.aclose()
        self.process.terminate()
        self.process.wait(timeout=60)


async def served_latencies(
    server: Server, cwd: Path, sessions: int, events: int
) -> tuple[list[float], float]:
    """Every session made and followed first, then all prompted at once: only streaming
    is timed, not the agents' start. Also the server's CPU seconds while streaming."""
    ids = [await server.new_session("stamped", cwd) for _ in range(sessions)]
    found: list[list[float]] = [[] for _ in ids]
    following = anyio.Semaphore(0)
    go = anyio.Event()

    async def follow(n: int, session_id: str) -> None:
        async with server.stamps(session_id) as stream:
            following.release()
            await go.wait()
            async for text in stream:
                if text:
                    found[n].append((time.monotonic_ns() - int(text)) / 1e6)
                elif found[n]:
                    break

    async def prompt(session_id: str) -> None:
        response = await server.http.post(f"/v1/sessions/{session_id}/prompt", json={"text": "go"})
        assert response.status_code == 202, response.text

    async with anyio.create_task_group() as tg:
        for n, session_id in enumerate(ids):
            tg.start_soon(follow, n, session_id)
        for _ in ids:
            await following.acquire()
        cpu = server.cpu()
        go.set()
        for session_id in ids:
            tg.start_soon(prompt, session_id)
    cpu = server.cpu() - cpu

    assert all(len(each) == events for each in found), [len(each) for each in found]
    return [x for each in found for x in each], cpu


def stand_in(
    tmp: str, events: int, pace: float, per_agent: int = 20
) -> tuple[list[str], dict[str, str]]:
    """The server's arguments and environment; its root is ``tmp/work`` (the state folder
    may not lie inside a root)."""
    agent = Path(tmp) / "stamped_agent.py"
    agent.write_text(STAMPED_AGENT)
    (Path(tmp) / "work").mkdir()
    return (
        ["--root", f"{tmp}/work", "--state-dir", f"{tmp}/state", "--max-sessions", "500",
         "--sessions-per-agent", str(per_agent),
         "--agent", f"stamped={sys.executable} {agent} {events} {pace}"],
        {k: v for k, v in os.environ.items() if k != "GEMWIRE_TOKEN"},
    )  # fmt: skip


async def latencies(
    sessions: int, events: int, pace: float, per_agent: int, profile: str | None
) -> tuple[list[float], float]:
    with tempfile.TemporaryDirectory() as tmp:
        args, env = stand_in(tmp, events, pace, per_agent)
        server = Server(args, env, Path(tmp, "work"), profile)
        try:
            return await served_latencies(server, Path(tmp, "work"), sessions, events)
        finally:
            await server.close()


async def direct_latencies(sessions: int, events: int, pace: float, per_agent: int) -> list[float]:
    """The same stand-in agents (as many processes as the server starts) read by this
    process straight from their stdout, no server between: the baseline."""
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "stamped_agent.py"
        agent.write_text(STAMPED_AGENT)
        found: list[float] = []
        counts = [min(per_agent, sessions - n) for n in range(0, sessions, per_agent)]

        async def one_agent(count: int) -> None:
            command = [sys.executable, str(agent), str(events), str(pace)]
            async with await anyio.open_process(command) as process:
                stdin, lines = process.stdin, process.stdout
                assert stdin is not None
                assert lines is not None

                async def call(ident: int, method: str, params: dict[str, Any]) -> None:
                    message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
                    await stdin.send(json.dumps(message).encode() + b"\n")

                buffer = b""

                async def messages() -> AsyncIterator[dict[str, Any]]:
                    nonlocal buffer
                    while True:
                        while b"\n" not in buffer:
                            buffer += await lines.receive()
                        line, buffer = buffer.split(b"\n", 1)
                        yield json.loads(line)

                read = messages()
                await call(0, "initialize", {"protocolVersion": 1})
                await anext(read)
                for n in range(1, count + 1):
                    await call(n, "session/new", {"cwd": tmp, "mcpServers": []})
                    await anext(read)
                ready.release()
                await go.wait()
                for n in range(1, count + 1):
                    await call(100 + n, "session/prompt", {"sessionId": f"s-{n}", "prompt": []})
                done = 0
                async for message in read:
                    if message.get("method") == "session/update":
                        text = message["params"]["update"]["content"]["text"]
                        found.append((time.monotonic_ns() - int(text)) / 1e6)
                    elif "result" in message:
                        done += 1
                        if done == count:
                            break
                await stdin.aclose()

        ready = anyio.Semaphore(0)
        go = anyio.Event()
        async with anyio.create_task_group() as tg:
            for count in counts:
                tg.start_soon(one_agent, count)
            for _ in counts:
                await ready.acquire()
            go.set()
        assert len(found) == sessions * events, (len(found), sessions * events)
        return found
