"""``GET /v1/batches/{id}/report``: a recorded eval (tests/fixtures/eval/web: Gemini CLI and
Qwen Code through examples/eval's first two tasks, ``-k 2``, on the scripted model) opened
read-only answers ``eval report --json``'s figures, each agent's pass rate with its Wilson
interval and every attempt's verdict, exactly; a batch that is not an eval says so."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from kit.server import Served, make_config, served

from gemwire.batch import read_results
from gemwire.cli import main
from gemwire.server import create_app

pytestmark = pytest.mark.anyio

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "web"
DOCUMENT = json.loads((Path(__file__).resolve().parents[3] / "docs" / "openapi.json").read_text())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(FIXTURE, root / "eval")
    return root.resolve()


@pytest.fixture
async def server(root: Path) -> AsyncIterator[Served]:
    async with served(create_app(make_config(str(root), str(root.parent / "state")))) as s:
        yield s


async def opened(server: Served, folder: str) -> str:
    response = await server.request("POST", "/v1/batches", json={"open": folder})
    assert response.status_code == 201, response.text
    batch_id: str = response.json()["id"]
    return batch_id


def attempt(attempt_id: str, outcome: str) -> dict[str, Any]:
    """An attempt as the route shows it: its verdict, and its time and verifier's output as
    the recording has them."""
    result = {r.task_id: r for r in read_results(FIXTURE)}[attempt_id]
    assert result.grade is not None
    task, agent, number = attempt_id.split(".")
    return {
        "id": attempt_id,
        "task": task,
        "agent": agent,
        "attempt": int(number),
        "outcome": outcome,
        "reward": 1.0 if outcome == "passed" else 0.0,
        "verify_status": outcome,
        "verify_output": result.grade.output,
        "error_kind": None,
        "duration_s": result.duration_s,
    }


def seconds(agent: str) -> float:
    return round(sum(r.duration_s for r in read_results(FIXTURE) if f".{agent}." in r.task_id), 3)


async def test_an_evals_report_is_the_cli_s_with_intervals_and_every_attempt(
    server: Served, root: Path
) -> None:
    batch_id = await opened(server, "eval")
    response = await server.request("GET", f"/v1/batches/{batch_id}/report")
    assert response.status_code == 200
    got = response.json()
    common: dict[str, Any] = {"errors": {}, "cost_usd": None, "agent_cost_usd": None}
    assert got == {
        "batch": batch_id,
        "is_eval": True,
        "agents": {
            # model.json: gemini misses largest once; qwen fixes both every time. Qwen Code
            # reports no tokens over ACP.
            "gemini": {"pass_at": {"1": 0.75, "2": 1.0}, "reward_mean": 0.75, "attempts": 4,
                       "graded": 4, **common, "tokens": 778, "seconds": seconds("gemini")},
            "qwen": {"pass_at": {"1": 1.0, "2": 1.0}, "reward_mean": 1.0, "attempts": 4,
                     "graded": 4, **common, "tokens": 0, "seconds": seconds("qwen")},
        },
        "pass_rates": {
            "gemini": {"passed": 3, "graded": 4, "rate": 0.75,
                       "low": 0.3006418400969081, "high": 0.954412739704631},
            "qwen": {"passed": 4, "graded": 4, "rate": 1.0,
                     "low": 0.5101091596030786, "high": 0.9999999999999999},
        },
        "tasks": [
            {"task": "add", "agent": "gemini", "attempts": 2, "graded": 2, "passed": 2,
             "reward_mean": 1.0, "errors": {}},
            {"task": "largest", "agent": "gemini", "attempts": 2, "graded": 2, "passed": 1,
             "reward_mean": 0.5, "errors": {}},
            {"task": "add", "agent": "qwen", "attempts": 2, "graded": 2, "passed": 2,
             "reward_mean": 1.0, "errors": {}},
            {"task": "largest", "agent": "qwen", "attempts": 2, "graded": 2, "passed": 2,
             "reward_mean": 1.0, "errors": {}},
        ],
        "attempts": [
            attempt("add.gemini.1", "passed"), attempt("add.gemini.2", "passed"),
            attempt("add.qwen.1", "passed"), attempt("add.qwen.2", "passed"),
            attempt("largest.gemini.1", "failed"), attempt("largest.gemini.2", "passed"),
            attempt("largest.qwen.1", "passed"), attempt("largest.qwen.2", "passed"),
        ],
    }  # fmt: skip
    assert got["attempts"][4]["verify_output"].endswith("FAILED (failures=1)\n")
    # The same figures as the command line's
    ran = CliRunner().invoke(main, ["eval", "report", str(root / "eval"), "--json"])
    assert ran.exit_code == 0, ran.output
    cli = json.loads(ran.stdout)
    assert (got["agents"], got["tasks"]) == (cli["agents"], cli["tasks"])
    # ... in the shape the OpenAPI document gives
    schema = DOCUMENT["paths"]["/v1/batches/{batch_id}/report"]["get"]["responses"]["200"]
    validator = Draft202012Validator(
        {**schema["content"]["application/json"]["schema"], "components": DOCUMENT["components"]}
    )
    assert list(validator.iter_errors(got)) == []


async def test_a_batch_that_is_not_an_eval_says_so(server: Served, root: Path) -> None:
    (root / "plain").mkdir()
    shutil.copy(FIXTURE / "results.jsonl", root / "plain" / "results.jsonl")  # no eval.json
    batch_id = await opened(server, "plain")
    response = await server.request("GET", f"/v1/batches/{batch_id}/report")
    assert (response.status_code, response.json()) == (
        200,
        {"batch": batch_id, "is_eval": False, "agents": {}, "pass_rates": {}, "tasks": [],
         "attempts": []},
    )  # fmt: skip


async def test_results_that_are_not_attempts_are_refused_by_name(
    server: Served, root: Path
) -> None:
    # Synthetic: an eval's folder holding a plain batch's result (``<task>``, not
    # ``<task>.<agent>.<n>``), made from a recorded one.
    (root / "odd").mkdir()
    shutil.copy(FIXTURE / "eval.json", root / "odd" / "eval.json")
    line = json.loads((FIXTURE / "results.jsonl").read_text().splitlines()[0])
    (root / "odd" / "results.jsonl").write_text(json.dumps({**line, "task_id": "plain"}) + "\n")
    batch_id = await opened(server, "odd")
    response = await server.request("GET", f"/v1/batches/{batch_id}/report")
    assert response.status_code == 422
    assert response.json()["error"] == {
        "kind": "unreadable",
        "message": f"{root / 'odd'} is not an eval's output: its result 'plain' is not an "
        "attempt (<task>.<agent>.<n>)",
    }


async def test_an_unknown_batch_is_a_404(server: Served) -> None:
    response = await server.request("GET", "/v1/batches/b_0000000000000000/report")
    assert (response.status_code, response.json()) == (
        404,
        {"error": {"kind": "not_found", "message": "no batch 'b_0000000000000000'"}},
    )
