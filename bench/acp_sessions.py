"""N sessions on one ``gemini --acp`` against N ``gemini -p`` processes.

    .venv/bin/python bench/acp_sessions.py [--sessions 20]

Both sides run the same work against the scripted model on 127.0.0.1 with the pinned
Gemini CLI 0.61.0: N prompts, each in its own folder, each answered by one model turn
that writes a file and one that answers. ACP: one agent process, N sessions opened (one
at a time, as the client does for Gemini CLI) and N turns run concurrently. ``-p``: N
``run_gemini`` runs at once. Reported: wall time, sessions/s, and the peak resident
memory of all the processes started (the sum of VmRSS over this process's descendants,
sampled every 50 ms); then the one agent's sessions/s and memory as ratios of the others'.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from rss import PeakRss

from gemwire import run_gemini
from gemwire.runners.acp import AcpClient, AcpOptions, AcpSession
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)


def scenario(count: int) -> Scenario:
    turns: list[Reply] = []
    for n in range(count):
        write = FunctionCall("write_file", {"file_path": f"out-{n}.txt", "content": f"{n}\n"})
        turns += [Reply([write], when=f"task-{n}:"), Reply([Text("Done.")], when=f"task-{n}:")]
    return Scenario(turns=list(turns))


async def measured(work: Callable[[], Awaitable[None]]) -> tuple[float, int]:
    """Wall seconds of ``work`` and the peak RSS (bytes) of the processes it started."""
    with PeakRss() as rss:
        started = time.monotonic()
        await work()
        elapsed = time.monotonic() - started
    return elapsed, rss.peak


async def one_agent(count: int, env: IsolatedGemini, folders: list[Path]) -> None:
    options = AcpOptions(
        command=(*pinned_gemini_command(), "--acp"),
        cwd=str(env.workspace),
        env=env.environ(),
        inherit_env=False,
        permissions="edits",
    )
    async with AcpClient(options) as client:

        async def one(n: int, session: AcpSession) -> None:
            async with session.prompt(f"task-{n}: write the file") as turn:
                result = await turn.wait()
            assert result.ok, result.error

        sessions = [await client.new_session(cwd=str(folders[n])) for n in range(count)]
        async with anyio.create_task_group() as tg:
            for n, session in enumerate(sessions):
                tg.start_soon(one, n, session)


async def processes(count: int, env: IsolatedGemini, folders: list[Path]) -> None:
    async def one(n: int) -> None:
        options = env.gemini_options(cwd=str(folders[n]), approval_mode="yolo")
        async with run_gemini(f"task-{n}: write the file", options) as run:
            async for _ in run:
                pass
        assert run.result.ok, run.result.error

    async with anyio.create_task_group() as tg:
        for n in range(count):
            tg.start_soon(one, n)


def run(name: str, work: Callable[..., Awaitable[None]], count: int) -> tuple[float, int]:
    """Wall seconds and peak RSS of ``work`` on ``count`` sessions, printed."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModel(scenario(count)) as model,
        IsolatedGemini(model.url, root=Path(tmp)) as env,
    ):
        folders = [Path(tmp) / f"project-{n}" for n in range(count)]
        for folder in folders:
            folder.mkdir()
        elapsed, peak = anyio.run(measured, lambda: work(count, env, folders))
        written = sum((folders[n] / f"out-{n}.txt").exists() for n in range(count))
        assert written == count, f"{name}: {written} of {count} files written"
    print(
        f"{name:<28} {count} sessions: {elapsed:6.1f} s, {count / elapsed:5.2f} sessions/s, "
        f"peak RSS {peak / 2**20:7.0f} MiB"
    )
    return elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=20)
    args = parser.parse_args()
    acp_s, acp_rss = run("one gemini --acp", one_agent, args.sessions)
    p_s, p_rss = run("one gemini -p per session", processes, args.sessions)
    # The ratio is what compares across machines and loads; the times alone do not.
    print(f"one agent: {p_s / acp_s:.2f}x the sessions/s, {acp_rss / p_rss:.3f} of the memory")


if __name__ == "__main__":
    main()
