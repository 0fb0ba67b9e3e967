"""gemwire batch and gemwire eval on a Ray cluster. One local cluster (two CPUs) serves the
module, since starting one takes ~10 s; each run's workers are actors of its own on it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import msgspec
import pytest
from kit.batch_tasks import check_outputs, comparable, scenario, tasks_file

from gemwire import GeminiOptions, SandboxUnavailable
from gemwire.batch import (
    BatchOptions,
    BatchStarted,
    Task,
    eval as eval_module,
    read_results,
    read_tasks,
    run_batch_sync,
)
from gemwire.batch.eval import EvalOptions, expand, run_eval
from gemwire.batch.runner import Executor, Grader, run_with
from gemwire.testing import IsolatedGemini, ScriptedModel, load_scenario

ray = pytest.importorskip("ray", reason="make test installs Ray (requirements-ray.txt)")

from gemwire.batch._ray import Node, RayExecutor

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
SOLVER = Path(__file__).resolve().parents[1] / "kit" / "eval_solver.py"


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    """The model a sandboxed attempt may reach (the stand-in agent never asks it)."""
    with ScriptedModel(load_scenario('{"turns": []}')) as served:
        yield served


@pytest.fixture(scope="module")
def cluster(model: ScriptedModel) -> Iterator[str]:
    """A local cluster of its own (``local``: never one a parallel test started), whose
    nodes' environment names the module's model, as a real cluster's nodes name theirs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOOGLE_GEMINI_BASE_URL", model.url)
        context = ray.init(
            address="local", num_cpus=2, include_dashboard=False, log_to_driver=False
        )
    try:
        yield context.address_info["gcs_address"]
    finally:
        ray.shutdown()


def test_ray_mode_gives_what_local_mode_gives(cluster: str, tmp_path: Path) -> None:
    n = 6
    tasks = read_tasks(tasks_file(tmp_path, n))
    outs = {}
    for name, on_ray in (("local", False), ("ray", True)):
        with ScriptedModel(scenario(n)) as model:
            env = IsolatedGemini(model.url, root=tmp_path / name)
            options = BatchOptions(
                concurrency=3,
                ray=on_ray,
                gemini=env.gemini_options(approval_mode="yolo"),
            )
            summary = run_batch_sync(tasks, tmp_path / name / "out", options)
            assert (summary.ok, summary.failed) == (n, 0), model.problems
        outs[name] = tmp_path / name / "out"
        check_outputs(outs[name], n)
    assert comparable(outs["ray"]) == comparable(outs["local"])
    assert (
        json.loads((outs["ray"] / "results.jsonl").read_text().splitlines()[0])["agent"] == "gemini"
    )


def eval_tasks(tmp_path: Path) -> list[Task]:
    """Two tasks graded by a hidden check.sh, which first lists what the verifier sees of
    the output folder's workspaces (sandboxed: its own alone)."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "check.sh").write_text('ls ..; test "$(cat answer)" = 42\n')
    return [
        Task(
            id=task_id,
            prompt=f"Write {number} to answer.",
            template=str(tmp_path / "repo"),
            verify=["sh", "check.sh"],
            verify_files=str(tmp_path / "hidden"),
        )
        for task_id, number in (("a", 42), ("b", 41))
    ]


# Each attempt's line: its turn's ok, its grade (status, reward, exit status, output), and
# what its agent saw of the workspaces. The solver writes 0 on first attempts, its
# prompt's number on second ones.
GRADED = {
    "a.gemini.1": (True, "failed", 0.0, 1, "a.gemini.1\n", "a.gemini.1"),
    "a.gemini.2": (True, "passed", 1.0, 0, "a.gemini.2\n", "a.gemini.2"),
    "b.gemini.1": (True, "failed", 0.0, 1, "b.gemini.1\n", "b.gemini.1"),
    "b.gemini.2": (True, "failed", 0.0, 1, "b.gemini.2\n", "b.gemini.2"),
}


def graded(out: Path) -> dict[str, tuple[object, ...]]:
    rows: dict[str, tuple[object, ...]] = {}
    for r in read_results(out):
        assert r.grade is not None
        grade = (r.grade.status, r.grade.reward, r.grade.exit_code, r.grade.output)
        rows[r.task_id] = (r.ok, *grade, (Path(r.workspace) / "seen").read_text())
    return rows


def test_a_sandboxed_eval_on_ray_is_graded_as_locally_and_resumes_each_attempt_once(
    bubblewrap: None, cluster: str, model: ScriptedModel, tmp_path: Path
) -> None:
    tasks = eval_tasks(tmp_path)
    gemini = GeminiOptions(executable=str(SOLVER), env={"GOOGLE_GEMINI_BASE_URL": model.url})
    options = EvalOptions(
        agents=("gemini",), k=2, sandbox=True, batch=BatchOptions(concurrency=2, gemini=gemini)
    )

    async def locally() -> None:
        async with run_eval(tasks, tmp_path / "local", options) as running:
            async for _ in running:
                pass

    anyio.run(locally)
    assert graded(tmp_path / "local") == GRADED

    # On Ray, from the command line, stopped by SIGTERM while b's second attempt waits (its
    # home, the solver's .gemini/hold, says so); then resumed from Python without the hold.
    tasks_path = tmp_path / "tasks.jsonl"
    tasks_path.write_bytes(b"".join(msgspec.json.encode(t) + b"\n" for t in tasks))
    holding = tmp_path / "holding"
    (holding / ".gemini").mkdir(parents=True)
    (holding / ".gemini" / "hold").write_text("b.gemini.2")
    out = tmp_path / "ray"
    argv = [
        GEMWIRE, "eval", str(tasks_path), "-o", str(out), "--agents", "gemini", "-k", "2",
        "-j", "2", "--sandbox", "--executable", str(SOLVER), "--gemini-home", str(holding),
        "--json", "--ray", cluster,
    ]  # fmt: skip
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        finished = 0
        for line in process.stdout:
            finished += json.loads(line)["type"] == "task_finished"
            if finished == 3:  # all but the one holding
                break
        process.send_signal(signal.SIGTERM)
        rest, said = process.communicate(timeout=60)
    assert process.returncode == 143, said
    assert said.endswith("gemwire: batch stopped by SIGTERM; re-run to resume\n")
    assert "batch_finished" not in rest
    assert sorted(graded(out)) == ["a.gemini.1", "a.gemini.2", "b.gemini.1"]

    on_ray = msgspec.structs.replace(options.batch, ray=True)
    started = []

    async def resumed() -> None:
        again = msgspec.structs.replace(options, batch=on_ray)
        async with run_eval(tasks, out, again) as running:
            started.extend([p async for p in running if isinstance(p, BatchStarted)])

    anyio.run(resumed)
    assert [(p.tasks, p.skipped) for p in started] == [(1, 3)]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == sorted(GRADED)  # once each
    assert graded(out) == GRADED


@asynccontextmanager
async def without_bubblewrap(here: Node) -> AsyncGenerator[tuple[Executor, Grader]]:
    """``here`` on a node with no bubblewrap: its worker's PATH names none."""
    os.environ["PATH"] = "/nonexistent"
    async with here() as made:
        yield made


def test_a_node_without_bubblewrap_refuses_the_sandboxed_eval_before_any_attempt(
    cluster: str, model: ScriptedModel, tmp_path: Path
) -> None:
    tasks = eval_tasks(tmp_path)
    out = tmp_path / "out"
    gemini = GeminiOptions(executable=str(SOLVER))
    options = EvalOptions(
        agents=("gemini",), sandbox=True, batch=BatchOptions(ray=True, gemini=gemini)
    )
    batch = msgspec.structs.replace(options.batch, mode="acp")
    here = partial(eval_module._on_this_machine, options, batch, (str(out),))
    # By value: the workers cannot import this module.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    executor = RayExecutor(
        eval_module._Mixed(batch, options), partial(without_bubblewrap, here), batch
    )

    async def go() -> None:
        async with run_with(expand(tasks, options), out, batch, executor, executor.grade) as run:
            async for _ in run:
                pass

    with pytest.raises(SandboxUnavailable, match=r"^--sandbox needs bubblewrap: apt-get"):
        anyio.run(go)
    assert read_results(out) == []
    assert not (out / "workspaces").exists()
