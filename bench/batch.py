"""Batch throughput: `acp` mode (long-lived agents) against `process` mode, in one run.

    .venv/bin/python bench/batch.py [--tasks 100] [--big 1000] [--ray 200]

Every task is one turn ("say ok") of the pinned Gemini CLI 0.61.0 against the scripted
model, which runs in a process of its own so that gemwire's CPU is this process's alone.
A task gets 120 s; one that takes longer is counted as failed, not waited for.

1. ``--tasks`` one-turn tasks in each mode: wall time, CPU seconds (this process and its
   children: the CLIs), tasks per CPU-second and their ratio; peak resident memory of the
   agent processes, per concurrent task.
2. ``--big`` tasks in ``acp`` mode: wall time, and gemwire's own CPU per task (this process
   only: reading tasks, routing events, writing events and results).
3. ``--ray`` tasks in ``acp`` mode on a local Ray cluster against the same locally: the
   overhead (skipped without Ray installed, or with ``--ray 0``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rss import PeakRss

from gemwire.batch import BatchOptions, read_tasks, run_batch_sync
from gemwire.testing import IsolatedGemini

MODEL = """
import sys, time
from gemwire.testing import Reply, Scenario, ScriptedModel, Text
with ScriptedModel(Scenario(turns=[Reply([Text("ok")], repeat=%d)])) as model:
    print(model.url, flush=True)
    sys.stdin.read()
"""


def cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def run(
    n: int, folder: Path, url: str, options: BatchOptions, *, sample_rss: bool = True
) -> dict[str, float]:
    """Run ``n`` tasks; the sampler of memory (a thread of this process) only when asked, since
    its CPU would count as gemwire's own."""
    folder.mkdir()
    home = IsolatedGemini(url, root=folder)
    tasks = folder / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps(
                {"prompt": f"say ok ({i})", "workspace": str(home.workspace), "timeout": 120}
            )
            + "\n"
            for i in range(n)
        )
    )
    gemini = home.gemini_options()
    options = BatchOptions(
        mode=options.mode,
        concurrency=options.concurrency,
        ray=options.ray,
        sessions_per_agent=options.sessions_per_agent,
        gemini=gemini,
    )
    own0, kids0 = cpu()
    start = time.perf_counter()
    with PeakRss(enabled=sample_rss) as rss:
        summary = run_batch_sync(read_tasks(tasks), folder / "out", options)
    wall = time.perf_counter() - start
    own1, kids1 = cpu()
    if summary.failed:
        print(f"  ({summary.failed} of {n} failed: {summary.by_error_kind})")
    return {
        "wall": wall,
        "own_cpu": own1 - own0,
        "cpu": own1 - own0 + kids1 - kids0,
        "peak_rss": rss.peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--big", type=int, default=1000)
    parser.add_argument("--ray", type=int, default=200)
    args = parser.parse_args()
    total = args.tasks * 2 + args.big + args.ray * 2
    model = subprocess.Popen(
        [sys.executable, "-c", MODEL % (total + 10)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert model.stdout is not None
    url = model.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as tmp:
            root = Path(tmp)
            figures(args, root, url)
    finally:
        model.communicate("")


def figures(args: argparse.Namespace, root: Path, url: str) -> None:
    n = args.tasks
    if n:
        compare(n, root, url)
    big_and_ray(args, root, url)


def compare(n: int, root: Path, url: str) -> None:
    print(f"{n} one-turn tasks, pinned Gemini CLI 0.61.0, scripted model, {os.cpu_count()} cores")
    process = run(n, root / "process", url, BatchOptions(mode="process", concurrency=2))
    acp = run(n, root / "acp", url, BatchOptions(mode="acp", concurrency=8))
    for name, r, conc in (("process -j 2", process, 2), ("acp -j 8", acp, 8)):
        print(
            f"  {name:<13} {r['wall']:6.1f} s wall  {r['cpu']:6.1f} CPU-s  "
            f"{n / r['cpu']:6.2f} tasks/CPU-s  peak RSS {r['peak_rss'] / 2**20:6.0f} MiB "
            f"({r['peak_rss'] / 2**20 / conc:5.0f} MiB per running task)"
        )
    print(f"  acp / process, tasks per CPU-second: {process['cpu'] / acp['cpu']:.1f}x")
    per_process = process["peak_rss"] / 2
    per_session = acp["peak_rss"] / 8
    print(f"  RSS per running task, acp / process: {per_session / per_process:.2f}")


def big_and_ray(args: argparse.Namespace, root: Path, url: str) -> None:
    if args.big:
        big = run(
            args.big, root / "big", url, BatchOptions(mode="acp", concurrency=8), sample_rss=False
        )
        print(
            f"{args.big} tasks, acp -j 8: {big['wall']:.1f} s wall, "
            f"{args.big / big['wall']:.1f} tasks/s; gemwire's own CPU "
            f"{1000 * big['own_cpu'] / args.big:.2f} ms per task"
        )
    if args.ray:
        try:
            import ray
        except ImportError:
            print("Ray not installed: skipped (make test installs it)")
            return
        local = run(args.ray, root / "local", url, BatchOptions(mode="acp", concurrency=8))
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
        try:
            on_ray = run(
                args.ray, root / "ray", url, BatchOptions(mode="acp", concurrency=8, ray=True)
            )
        finally:
            ray.shutdown()
        print(
            f"{args.ray} tasks, acp -j 8: local {local['wall']:.1f} s, on a local Ray cluster "
            f"{on_ray['wall']:.1f} s ({on_ray['wall'] / local['wall']:.2f}x, cluster start "
            f"not counted)"
        )


if __name__ == "__main__":
    main()
