"""What ``gemwire eval --sandbox`` adds to an attempt's wall time, in one run.

    .venv/bin/python bench/eval_sandbox.py [--runs 5]

Each run is one attempt of examples/eval's ``add`` task (the pinned Gemini CLI 0.61.0 fixes
calc.py against the scripted model, then its hidden test grades it), once without the
sandbox and once with it, alternately, each in an eval of its own. Prints each mode's median
attempt time (the batch's ``duration_s``: the agent's turn and the verifier) and their ratio,
and the sandbox's own start: ``bwrap`` running ``true``, with and without the model's relay.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from gemwire.batch import BatchOptions, read_results, read_tasks
from gemwire.batch.eval import EvalOptions, run_eval
from gemwire.batch.sandbox import Bubblewrap, Confinement
from gemwire.testing import IsolatedGemini, ScriptedModel, load_scenario, pinned_gemini

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "eval"


def attempt(folder: Path, *, sandbox: bool) -> float:
    """One attempt of ``add``, graded; its ``duration_s``."""
    [add] = [t for t in read_tasks(EXAMPLE / "tasks.jsonl") if t.id == "add"]
    with ScriptedModel(load_scenario((EXAMPLE / "model.json").read_text())) as model:
        env = IsolatedGemini(model.url, root=folder)
        gemini = env.gemini_options(executable=str(pinned_gemini()), approval_mode="yolo")
        options = EvalOptions(
            agents=("gemini",), sandbox=sandbox, batch=BatchOptions(concurrency=1, gemini=gemini)
        )

        async def go() -> None:
            async with run_eval([add], folder / "out", options) as running:
                async for _ in running:
                    pass

        anyio.run(go)
    [result] = read_results(folder / "out")
    assert result.grade is not None
    assert result.grade.status == "passed", result
    return result.duration_s


def start_ms(command: list[str], runs: int = 20) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run(command, check=True)
    return (time.perf_counter() - started) / runs * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"plain": [], "sandbox": []}
    with tempfile.TemporaryDirectory() as root:
        for n in range(args.runs):
            for mode, durations in times.items():
                folder = Path(root, f"{mode}-{n}")
                durations.append(attempt(folder, sandbox=mode == "sandbox"))
        sandbox = anyio.run(Bubblewrap.found)
        (Path(root) / "model.sock").touch()
        bare = Confinement(workspace=root, home=root)
        relayed = Confinement(
            workspace=root, home=root, model_port=49999, model_socket=str(Path(root, "model.sock"))
        )
        starts = {
            "bwrap true (ms)": start_ms(sandbox.command(["true"], bare)),
            "bwrap + relay true (ms)": start_ms(sandbox.command(["true"], relayed)),
            "true (ms)": start_ms(["true"]),
        }
    plain, boxed = statistics.median(times["plain"]), statistics.median(times["sandbox"])
    figures = {
        "runs": args.runs,
        "attempt median, plain (s)": round(plain, 2),
        "attempt median, sandboxed (s)": round(boxed, 2),
        "sandboxed / plain": round(boxed / plain, 3),
        **{name: round(ms, 1) for name, ms in starts.items()},
    }
    json.dump(figures, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
