"""``gemwire serve`` beside ``qwen serve`` in one run: memory and start-up per session.

    .venv/bin/python bench/serve_vs_qwen.py [--sessions 10] [--settle 3] [--sessions-per-agent 20]

The same Qwen Code agent (the pinned 0.24.4 of clis/, in one isolated home, against one
scripted model on 127.0.0.1) behind each server, one after the other:

- ``gemwire serve`` with the agent as ``--agent qwen-pinned=<qwen --acp>``: sessions made by
  ``POST /v1/sessions``; once with a process a session (``--sessions-per-agent 1``), once
  with processes shared (``--sessions-per-agent`` this script's, the server's default;
  given as 1, the one run is the first);
- ``qwen serve --no-web``: sessions made by ACP ``session/new`` over its ``/acp`` WebSocket,
  on one connection (gemwire's own client, `remote_channel`).

For each: the process tree's memory (the server and every process under it: VmRSS, and PSS,
which counts a page shared by N processes as 1/N to each) once the server is ready, then
once a first session is made, then after ``--sessions`` more idle sessions were made one
after the other (each time ``--settle`` seconds after the last); the processes in the tree;
the time to make each session (median and total). A session's memory is what the
``--sessions`` after the first added, divided by their number: what one more idle session
costs on a server whose agent runs. The first session's own figure (the agent's start:
gemwire starts its agent with it, qwen serve before it is ready) is shown apart, as the
tree at ready. Then the ratios, gemwire over qwen serve. Nothing is prompted: idle
sessions, as the issue's figure counts them.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx

from gemwire.errors import AgentRequestFailed
from gemwire.runners.acp import AcpClient, AcpOptions
from gemwire.runners.acp.remote import remote_channel
from gemwire.testing import Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import IsolatedAgent, isolated_agent

TOKEN = "bench-token-0123456789"
URL = re.compile(r"^gemwire serve: (http://127\.0\.0\.1:\d+)/\?token=(\S+)\n$")


def tree(root: int) -> list[int]:
    """``root`` and every process under it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def memory(root: int) -> tuple[int, int, int]:
    """(RSS, PSS, processes) of the tree under ``root``, bytes."""
    rss = pss = count = 0
    for pid in tree(root):
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        fields = dict(re.findall(r"^(\w+):\s+(\d+) kB", rollup, re.MULTILINE))
        rss += int(fields.get("Rss", 0)) * 1024
        pss += int(fields.get("Pss", 0)) * 1024
        count += 1
    return rss, pss, count


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Figures:
    def __init__(self, name: str, ready: tuple[int, int, int]) -> None:
        self.name = name
        self.ready = ready
        """The tree once the server is ready."""
        self.first = self.after = ready
        """The tree once the first session is made, and after the others."""
        self.first_time = 0.0
        self.times: list[float] = []
        """The time to make each session after the first."""

    def per_session(self, index: int) -> float:
        return (self.after[index] - self.first[index]) / max(len(self.times), 1)

    def show(self) -> None:
        mib = 1024 * 1024
        print(
            f"{self.name:>14}: first session {self.first_time:.2f} s, then {len(self.times)} "
            f"in {sum(self.times):.2f} s (median {statistics.median(self.times) * 1000:.0f} ms "
            f"each); tree RSS {self.ready[0] / mib:.1f} at ready -> {self.first[0] / mib:.1f} "
            f"-> {self.after[0] / mib:.1f} MiB ({self.per_session(0) / mib:.2f} MiB a "
            f"session), PSS {self.ready[1] / mib:.1f} -> {self.first[1] / mib:.1f} -> "
            f"{self.after[1] / mib:.1f} MiB ({self.per_session(1) / mib:.2f} MiB a session), "
            f"processes {self.ready[2]} -> {self.first[2]} -> {self.after[2]}"
        )


def start_gemwire(
    env: IsolatedAgent, tmp: Path, sessions: int, per_agent: int
) -> subprocess.Popen[str]:
    serve = ["serve", "--port", "0", "--root", str(env.workspace), "--state-dir", str(tmp)]
    limit = ["--max-sessions", str(sessions + 1), "--sessions-per-agent", str(per_agent)]
    agent = ["--agent", f"qwen-pinned={' '.join(env.command)}"]
    return subprocess.Popen(
        [sys.executable, "-m", "gemwire", *serve, *limit, *agent],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env.environ({"GEMWIRE_TOKEN": TOKEN}),
        cwd=env.workspace,
    )


def start_qwen(env: IsolatedAgent, port: int) -> subprocess.Popen[str]:
    serve = ["serve", "--hostname", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(
        [env.command[0], *serve, "--workspace", str(env.workspace), "--no-web"],
        # Its runtime starts behind its back: on a busy machine it takes a while.
        env=env.environ(
            {"QWEN_SERVER_TOKEN": TOKEN, "QWEN_SERVE_RUNTIME_STARTUP_TIMEOUT_MS": "120000"}
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def gemwire_serve(
    env: IsolatedAgent, tmp: Path, sessions: int, settle: float, per_agent: int
) -> Figures:
    process = start_gemwire(env, tmp, sessions, per_agent)
    try:
        assert process.stdout is not None
        match = URL.match(process.stdout.readline())
        assert match is not None, "gemwire serve did not print its URL"
        async with httpx.AsyncClient(
            base_url=match.group(1), headers={"Authorization": f"Bearer {TOKEN}"}, timeout=300
        ) as http:
            assert (await http.get("/ready")).status_code == 200
            figures = Figures(f"gemwire ({per_agent}/proc)", memory(process.pid))
            for n in range(sessions + 1):
                started = time.monotonic()
                body = {"agent": "qwen-pinned", "cwd": str(env.workspace)}
                response = await http.post("/v1/sessions", json=body)
                assert response.status_code == 201, response.text
                if n:
                    figures.times.append(time.monotonic() - started)
                else:
                    figures.first_time = time.monotonic() - started
                    await anyio.sleep(settle)
                    figures.first = memory(process.pid)
            await anyio.sleep(settle)
            figures.after = memory(process.pid)
        return figures
    finally:
        process.terminate()
        process.wait(60)


async def qwen_serve(env: IsolatedAgent, sessions: int, settle: float) -> Figures:
    port = free_port()
    process = start_qwen(env, port)
    try:
        assert process.stdout is not None
        for line in process.stdout:  # /acp comes a moment after it listens
            if "WebSocket transport enabled" in line:
                break
        else:
            raise AssertionError(f"qwen serve ended with {process.wait()}")
        channel = remote_channel(f"ws://127.0.0.1:{port}/acp", token=TOKEN)
        # Idle sessions, no prompt: nothing asks, and qwen serve names no agent gemwire
        # knows the modes of (a preset that may deny would refuse it).
        async with AcpClient(AcpOptions(permissions="all"), channel=channel) as client:
            figures = Figures("qwen serve", memory(process.pid))
            for n in range(sessions + 1):
                # Its runtime starts behind its back after it says it listens: on a busy
                # machine its first session/new may be an "Internal error" for a while.
                # Tried again then; only the call that succeeded is timed.
                for attempt in range(60 if n == 0 else 1):
                    started = time.monotonic()
                    try:
                        await client.new_session(cwd=str(env.workspace))
                        break
                    except AgentRequestFailed:
                        if attempt == 59 or n:
                            raise
                        await anyio.sleep(2)
                if n:
                    figures.times.append(time.monotonic() - started)
                else:
                    figures.first_time = time.monotonic() - started
                    await anyio.sleep(settle)
                    figures.first = memory(process.pid)
            await anyio.sleep(settle)
            figures.after = memory(process.pid)
        return figures
    finally:
        process.terminate()
        process.wait(60)
        if process.stdout is not None:
            process.stdout.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--sessions-per-agent", type=int, default=20)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModel(Scenario(turns=[Reply([Text("Hi.")]) for _ in range(4)])) as model,
    ):
        env = isolated_agent("qwen", model, root=Path(tmp))
        ours = []
        for per_agent in dict.fromkeys((1, args.sessions_per_agent)):
            state = Path(tmp) / f"state-{per_agent}"
            ours.append(await gemwire_serve(env, state, args.sessions, args.settle, per_agent))
            ours[-1].show()
        theirs = await qwen_serve(env, args.sessions, args.settle)
        theirs.show()
    for figures in ours:
        for index, what in ((0, "RSS"), (1, "PSS")):
            ratio = figures.per_session(index) / max(theirs.per_session(index), 1)
            print(f"{figures.name}: memory a session ({what}) / qwen serve's: {ratio:.2f}x")
        rate = statistics.median(figures.times) / statistics.median(theirs.times)
        print(f"{figures.name}: time to make a session (median) / qwen serve's: {rate:.2f}x")


if __name__ == "__main__":
    anyio.run(main)
