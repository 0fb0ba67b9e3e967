"""How fast the ``gemwire`` command starts, against a bare Python start measured in the same run.

    .venv/bin/python bench/cli_startup.py [--runs 21]

Each command is started as a fresh process (what a person typing it waits for), the
rounds interleaved so that load on the machine hits every contender alike; the median
of each is printed with what it costs beyond the baseline ``python -c pass``. Targets:
``gemwire --help`` at most 150 ms; ``gemwire doctor`` (which also starts ``node
--version``) quick enough to run without thinking.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
HELP_TARGET_MS = 150.0


def contenders(home: str) -> dict[str, list[str]]:
    return {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "gemwire --help": [GEMWIRE, "--help"],
        "gemwire --version": [GEMWIRE, "--version"],
        "gemwire run --help": [GEMWIRE, "run", "--help"],
        "gemwire config list": [GEMWIRE, "config", "list"],
        "gemwire doctor": [GEMWIRE, "doctor", "--gemini-home", home],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as home:
        env = {**os.environ, "GEMWIRE_CONFIG": os.path.join(home, "config.toml")}
        commands = contenders(home)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                started = time.perf_counter()
                subprocess.run(argv, stdout=subprocess.DEVNULL, env=env, check=False)
                times[name].append((time.perf_counter() - started) * 1000)
    baseline = statistics.median(times["python -c pass (baseline)"])
    print(f"{args.runs} interleaved runs each, median wall time of a fresh process")
    print(f"{'command':<28} {'ms':>8} {'beyond baseline':>16}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:<28} {median:>8.1f} {median - baseline:>13.1f} ms")
    help_ms = statistics.median(times["gemwire --help"])
    verdict = "met" if help_ms <= HELP_TARGET_MS else "MISSED"
    print(f"gemwire --help: {help_ms:.0f} ms, target <= {HELP_TARGET_MS:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
