"""What ``follow_session_file`` costs a run: wall time and gemwire's own CPU time.

    .venv/bin/python bench/session_follower.py [--runs 5]

The real Gemini CLI 0.61.0 against the scripted model, two model turns with thoughts and
a write_file call (the scenario of tests/e2e/test_session_follower.py), run ``--runs``
times with and without following the session file, interleaved. Reported: median wall
time of the run, median CPU time of this process (the runner, the decoder, the follower;
the CLI is a child and not counted), and how many thought_delta events came.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from gemwire import run_gemini
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    Thought,
)

SCENARIO = Scenario(
    turns=[
        Reply(
            [
                Thought("**Planning**\n\nWrite the file first."),
                FunctionCall("write_file", {"file_path": "notes.txt", "content": "hi\n"}),
            ]
        ),
        Reply([Thought("**Done**\n\nSay so."), Text("Written.")]),
    ]
)


async def once(follow: bool) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp, ScriptedModel(SCENARIO) as model:
        env = IsolatedGemini(model.url, root=Path(tmp))
        options = env.gemini_options(approval_mode="yolo", follow_session_file=follow)
        wall, cpu = time.perf_counter(), time.process_time()
        thoughts = 0
        async with run_gemini("write notes.txt", options) as run:
            async for event in run:
                thoughts += event.type == "thought_delta"
        return time.perf_counter() - wall, time.process_time() - cpu, thoughts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
    for _ in range(args.runs):
        for follow in (False, True):
            results[follow].append(anyio.run(once, follow))
    for follow, rows in results.items():
        wall = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        label = "follow_session_file" if follow else "stream only        "
        print(
            f"{label}  wall {wall:6.3f} s  gemwire CPU {cpu * 1000:7.1f} ms  thoughts {rows[0][2]}"
        )


if __name__ == "__main__":
    main()
