"""``gemwire eval report`` over a big eval's results, in one run.

    .venv/bin/python bench/eval_report.py [--attempts 10000] [--repeat 3]

Writes an eval's ``results.jsonl`` of that many attempts (500 tasks, two agents, the rest
attempts of each; every fifth failed, one in fifty a verifier's timeout, each with a grade,
usage, the agent's cost and two changed files), then times, as a person runs them:
``gemwire eval report OUT --json`` and the table, as processes (wall time and CPU time, each
the best of ``--repeat``), beside ``python -c 'import gemwire.cli'`` (the start they share) and, in
this process,
`read_results` alone (the floor) against `read_results` and `report` together.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from gemwire.batch import read_results
from gemwire.batch.eval import attempt_id
from gemwire.batch.eval_report import report
from gemwire.batch.results import FileChange, Grade, ReportedCost, TaskResult
from gemwire.events import TokenUsage

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
TASKS = 500
AGENTS = ("gemini", "qwen")


def results(attempts: int) -> list[TaskResult]:
    per_task = max(1, attempts // (TASKS * len(AGENTS)))
    made: list[TaskResult] = []
    for n in range(1, per_task + 1):
        for t in range(TASKS):
            for agent in AGENTS:
                i = len(made)
                timed_out = i % 50 == 0
                reward = None if timed_out else float(i % 5 != 0)
                grade = Grade(
                    status="timeout" if timed_out else "passed" if reward else "failed",
                    reward=reward,
                    exit_code=None if timed_out else int(not reward),
                    output="Ran 3 tests in 0.001s\n\nOK\n",
                    duration_s=0.2,
                )
                made.append(
                    TaskResult(
                        task_id=attempt_id(f"task-{t:04d}", agent, n),
                        ok=True,
                        error=None,
                        answer="Fixed the off-by-one in calc.py.",
                        files_changed=[
                            FileChange(path="calc.py", change="modified"),
                            FileChange(path="notes.md", change="created"),
                        ],
                        usage=TokenUsage(input_tokens=9000, output_tokens=300, total_tokens=9300),
                        duration_s=12.5,
                        attempts=1,
                        session_id=f"s-{i}",
                        resume=None,
                        workspace=f"/out/workspaces/task-{t:04d}.{agent}.{n}",
                        agent=agent if agent == "gemini" else "acp:qwen-code",
                        grade=grade,
                        tool_calls=3,
                        agent_cost=None
                        if agent == "gemini"
                        else ReportedCost(amount=0.01, currency="USD"),
                    )
                )
                if len(made) == attempts:
                    return made
    return made


def best(run: Callable[[], object], times: int) -> float:
    """The least wall time of ``times`` runs."""
    seconds = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def best_cpu(argv: list[str], times: int) -> float:
    """The least CPU time (user and system) of ``times`` runs of a process: on a machine
    shared with other work, what the command itself costs."""
    seconds = []
    for _ in range(times):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(argv, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        made = results(args.attempts)
        encoder = msgspec.json.Encoder()
        Path(root, "results.jsonl").write_bytes(b"".join(encoder.encode(r) + b"\n" for r in made))

        def command(*extra: str) -> Callable[[], object]:
            argv = [GEMWIRE, "eval", "report", root, *extra]
            return lambda: subprocess.run(argv, check=True, capture_output=True)

        size = Path(root, "results.jsonl").stat().st_size
        seconds = {
            "eval report --json (s)": best(command("--json"), args.repeat),
            "eval report, the table (s)": best(command(), args.repeat),
            "eval report --json, CPU (s)": best_cpu(
                [GEMWIRE, "eval", "report", root, "--json"], args.repeat
            ),
            "eval report, the table, CPU (s)": best_cpu(
                [GEMWIRE, "eval", "report", root], args.repeat
            ),
            "python -c 'import gemwire.cli', CPU (s)": best_cpu(
                [sys.executable, "-c", "import gemwire.cli"], args.repeat
            ),
            "python -c 'import gemwire.cli' (s)": best(
                lambda: subprocess.run([sys.executable, "-c", "import gemwire.cli"], check=True),
                args.repeat,
            ),
            "read_results (s)": best(lambda: read_results(root), args.repeat),
            "read_results + report (s)": best(lambda: report(read_results(root)), args.repeat),
        }
    floor, whole = seconds["read_results (s)"], seconds["read_results + report (s)"]
    figures = {
        "attempts": len(made),
        "MB": round(size / 1e6, 1),
        **{name: round(value, 3) for name, value in seconds.items()},
        "report / read_results": round(whole / floor, 2),
    }
    json.dump(figures, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
