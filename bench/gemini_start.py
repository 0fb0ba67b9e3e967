"""What one Node process instead of two saves on a headless Gemini CLI turn.

    .venv/bin/python bench/gemini_start.py [--runs 11]

The pinned CLI answers one prompt (``-o stream-json``) from the scripted model, started as
``gemini`` starts by default (the launcher relaunches the CLI as its child with a larger
heap) and as gemwire starts it (``GEMINI_CLI_NO_RELAUNCH=1``: the CLI alone). The rounds
alternate so that load on the machine hits both alike; the medians and their ratio are
printed, the relaunch being the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from gemwire.testing import (
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

CONTENDERS = {
    "relaunched (gemini's default, baseline)": {"GEMINI_CLI_NO_RELAUNCH": ""},
    "one process (gemwire's start)": {"GEMINI_CLI_NO_RELAUNCH": "1"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    scenario = Scenario(turns=[Reply([Text("ok")], repeat=2 * args.runs)])
    with (
        tempfile.TemporaryDirectory(prefix="gemwire-bench-") as root,
        ScriptedModel(scenario) as model,
    ):
        env = IsolatedGemini(model.url, root=Path(root))
        argv = [*pinned_gemini_command(), "-o", "stream-json"]
        for _ in range(args.runs):
            for name, extra in CONTENDERS.items():
                started = time.perf_counter()
                subprocess.run(
                    argv, input=b"hi", env=env.environ(extra), cwd=env.workspace,
                    capture_output=True, check=True,
                )  # fmt: skip
                times[name].append(time.perf_counter() - started)
    baseline = statistics.median(times["relaunched (gemini's default, baseline)"])
    print(f"{args.runs} alternating headless turns each, median wall time")
    for name, samples in times.items():
        median = statistics.median(samples)
        spread = f"{min(samples):.2f}-{max(samples):.2f}"
        print(f"{name:<40} {median:>6.2f} s ({spread})  {median / baseline:.2f}x")


if __name__ == "__main__":
    main()
