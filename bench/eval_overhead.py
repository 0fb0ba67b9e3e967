"""gemwire's own CPU per ``gemwire eval`` attempt, the verifier excluded, in one run.

    .venv/bin/python bench/eval_overhead.py [--attempts 1000] [-j 8]

An eval of that many attempts (half as many tasks, ``-k 2``, one agent) in this process, in
Gemini CLI's place a stand-in, a shell script writing one attempt's stream-json (the
session's start, a ``write_file`` call and its result, an answer in three parts, the
result), each attempt in its own copy of a small template; every attempt graded by an
in-process stand-in for the verifier, so the verifier's own work is left out. Beside it, a
plain batch of as many tasks with the same stand-in and template. Prints the CPU time
(user and system) of this process per attempt, for the eval and for the batch, their
ratio, and the CPU of the children per attempt (the stand-in, and the launcher each child
starts through).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

import anyio
import msgspec

from gemwire import GeminiOptions
from gemwire.batch import BatchOptions, Task, eval as eval_module, read_results, run_batch
from gemwire.batch.eval import EvalOptions, run_eval
from gemwire.batch.results import Grade

LINES = [
    {"type": "init", "timestamp": "t", "session_id": "s", "model": "gemini-2.5-flash"},
    {
        "type": "tool_use",
        "timestamp": "t",
        "tool_name": "write_file",
        "tool_id": "c1",
        "parameters": {"file_path": "calc.py", "content": "def add(a, b):\n    return a + b\n"},
    },
    {"type": "tool_result", "timestamp": "t", "tool_id": "c1", "status": "success", "output": "ok"},
    *(
        {"type": "message", "timestamp": "t", "role": "assistant", "content": part, "delta": True}
        for part in ("Fixed ", "the bug ", "in calc.py.")
    ),
    {
        "type": "result",
        "timestamp": "t",
        "status": "success",
        "stats": {
            "total_tokens": 9300,
            "input_tokens": 9000,
            "output_tokens": 300,
            "duration_ms": 900,
            "tool_calls": 1,
        },
    },
]


async def grade(task: Task, workspace: str, **_: object) -> Grade:
    """The verifier's stand-in: a pass, at no cost."""
    return Grade(status="passed", reward=1.0, exit_code=0, output="", duration_s=0.0)


def cpu() -> tuple[float, float]:
    """CPU seconds so far of this process, and of its children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def measure(run: object) -> tuple[float, float]:
    """CPU of this process and of its children while ``run`` (a coroutine function) runs."""
    before = cpu()
    anyio.run(run)  # type: ignore[arg-type]
    after = cpu()
    return after[0] - before[0], after[1] - before[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=1000)
    parser.add_argument("-j", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root_name:
        root = Path(root_name)
        stand_in = root / "gemini"
        output = "".join(json.dumps(line) + "\n" for line in LINES)
        stand_in.write_text(f"#!/bin/sh\ncat > /dev/null\nprintf '%s' '{output}'\n")
        stand_in.chmod(0o755)
        (root / "repo").mkdir()
        (root / "repo" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        gemini = GeminiOptions(
            executable=str(stand_in), approval_mode="yolo", gemini_home=root_name
        )
        batch = BatchOptions(concurrency=args.j, gemini=gemini)
        tasks = [
            Task(id=f"t{n:05d}", prompt="Fix calc.py.", template=str(root / "repo"), verify="true")
            for n in range(args.attempts // 2)
        ]
        eval_module.verify = grade  # type: ignore[attr-defined]  # the verifier left out

        async def evaluate() -> None:
            options = EvalOptions(agents=("gemini",), k=2, batch=batch)
            async with run_eval(tasks, root / "eval", options) as running:
                async for _ in running:
                    pass

        async def plain() -> None:
            unverified = [
                msgspec.structs.replace(t, id=f"{t.id}.{n}", verify=None)
                for t in tasks
                for n in (1, 2)
            ]
            async with run_batch(unverified, root / "batch", batch) as running:
                async for _ in running:
                    pass

        attempts = len(tasks) * 2
        eval_self, eval_children = measure(evaluate)
        batch_self, batch_children = measure(plain)
        graded = [r.grade and r.grade.status for r in read_results(root / "eval")]
        assert graded == ["passed"] * attempts, graded
        assert len(read_results(root / "batch")) == attempts
    figures = {
        "attempts": attempts,
        "eval: this process, CPU per attempt (ms)": round(eval_self / attempts * 1000, 2),
        "batch: this process, CPU per attempt (ms)": round(batch_self / attempts * 1000, 2),
        "eval / batch": round(eval_self / batch_self, 3),
        "eval: children, CPU per attempt (ms)": round(eval_children / attempts * 1000, 2),
        "batch: children, CPU per attempt (ms)": round(batch_children / attempts * 1000, 2),
    }
    json.dump(figures, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
