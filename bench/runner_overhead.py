"""What running through gemwire costs, against running the CLI bare, in one run.

    .venv/bin/python bench/runner_overhead.py [--runs 5] [--events 2000]

1. Event latency: a child process writes stream-json events stamped with CLOCK_MONOTONIC
   (shared by all processes on Linux), paced 1 ms apart; the consumer of `run_gemini`
   notes when each event reaches it. p50 / p99 / max of the difference.
2. Wall time: the same scenario (a write_file call, a shell call, an answer) run by the
   pinned real Gemini CLI 0.61.0 against the scripted model, bare (stdout read to the end
   by a plain subprocess) and through `run_gemini`, interleaved; median of each and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from gemwire import GeminiOptions, run_gemini
from gemwire.events import MessageDelta
from gemwire.runners.discovery import shim_command
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)

STAMPED_CHILD = """
import sys, time
sys.stdin.read()
out = sys.stdout
out.write('{"type":"init","timestamp":"t","session_id":"s","model":"m"}\\n'); out.flush()
for _ in range(%d):
    out.write('{"type":"message","timestamp":"t","role":"assistant","content":"%%d","delta":true}\\n' %% time.monotonic_ns())
    out.flush()
    time.sleep(0.001)
out.write('{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":1,"input_tokens":1,"output_tokens":0,"duration_ms":1,"tool_calls":0}}\\n')
"""

SCENARIO = Scenario(
    turns=[
        Reply(
            [Text("Writing."), FunctionCall("write_file", {"file_path": "a.txt", "content": "a\n"})]
        ),
        Reply([FunctionCall("run_shell_command", {"command": "cat a.txt"})]),
        Reply([Text("Done.")]),
    ]
)


async def latencies(events: int, folder: Path) -> list[float]:
    launcher = folder / "stamped-gemini"
    script = folder / "stamped.py"
    script.write_text(STAMPED_CHILD % events)
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}"\n')
    launcher.chmod(0o755)
    async with run_gemini("go", GeminiOptions(executable=str(launcher), cwd=str(folder))) as run:
        return [
            (time.monotonic_ns() - int(event.text)) / 1e6
            async for event in run
            if isinstance(event, MessageDelta)
        ]


def bare(gemini: str, env: IsolatedGemini) -> float:
    command = shim_command(Path(gemini))  # on Windows, what the .cmd runs
    started = time.monotonic()
    subprocess.run(
        [*command, "--output-format", "stream-json", "--approval-mode", "yolo"],
        input=b"write a.txt and show it",
        cwd=env.workspace,
        # One Node process, as gemwire starts it (environ() says so): the ratio is what
        # gemwire adds, not what skipping the relaunch saves (bench/gemini_start.py).
        env=env.environ(),
        capture_output=True,
        check=True,
    )
    return time.monotonic() - started


def through_gemwire(gemini: str, env: IsolatedGemini) -> float:
    async def main() -> None:
        options = GeminiOptions(
            cwd=str(env.workspace), env=env.environ(), executable=gemini, approval_mode="yolo"
        )
        async with run_gemini("write a.txt and show it", options) as run:
            async for _ in run:
                pass
        assert run.result.ok, run.result.error

    started = time.monotonic()
    anyio.run(main)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = sorted(anyio.run(latencies, args.events, Path(tmp)))
    p50, p99 = found[len(found) // 2], found[int(len(found) * 0.99)]
    print(
        f"event latency, child write -> consumer ({len(found)} events): p50 {p50:.3f} ms, p99 {p99:.3f} ms, max {found[-1]:.3f} ms"
    )

    gemini = str(pinned_gemini())
    times: dict[str, list[float]] = {"bare": [], "gemwire": []}
    for _ in range(args.runs):
        for name, fn in (("bare", bare), ("gemwire", through_gemwire)):
            with (
                ScriptedModel(SCENARIO) as model,
                IsolatedGemini(model.url, settings={"general": {"maxAttempts": 1}}) as env,
            ):
                times[name].append(fn(gemini, env))
    bare_s, ours_s = statistics.median(times["bare"]), statistics.median(times["gemwire"])
    print(f"wall time, Gemini CLI 0.61.0, 3 model turns, {args.runs} interleaved runs each:")
    print(f"  bare gemini:        median {bare_s:.3f} s  {[round(t, 2) for t in times['bare']]}")
    print(f"  through gemwire:    median {ours_s:.3f} s  {[round(t, 2) for t in times['gemwire']]}")
    print(f"  ratio gemwire/bare: {ours_s / bare_s:.3f}")


if __name__ == "__main__":
    main()
