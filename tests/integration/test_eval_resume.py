"""``gemwire eval`` stopped mid-way, by SIGTERM or ``kill -9``, then run again: every attempt
ends up in ``OUT/results.jsonl`` exactly once. A stand-in Gemini CLI (fake_gemini_eval.py)
and a shell verifier hold the second attempts until the eval is stopped, so which attempts
are finished when the signal comes is known, not raced."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kit.processes import alive
from kit.waiting import eventually_blocking

from gemwire.batch.output import STOPPED

FAKE = Path(__file__).with_name("fake_gemini_eval.py")
GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
TASKS = ("t1", "t2", "t3")
ATTEMPTS = sorted(f"{t}.gemini.{n}" for t in TASKS for n in (1, 2))
CHECK = """\
if [ -n "$FAKE_EVAL_HOLD_VERIFY" ] && [ "${PWD##*.}" = 2 ]; then
  echo $$ > "$FAKE_EVAL_HOLD_VERIFY/tmp-${PWD##*/}"
  mv "$FAKE_EVAL_HOLD_VERIFY/tmp-${PWD##*/}" "$FAKE_EVAL_HOLD_VERIFY/${PWD##*/}"
  exec sleep 600
fi
test "$(cat answer)" = 42
"""


def setup(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "repo").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "check.sh").write_text(CHECK)
    tasks = tmp_path / "tasks.jsonl"
    common = {"template": "repo", "verify": "sh check.sh", "verify_files": "hidden"}
    tasks.write_text(
        "".join(json.dumps({"id": t, "prompt": "fix", **common}) + "\n" for t in TASKS)
    )
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    argv = [
        GEMWIRE, "eval", str(tasks), "-o", str(tmp_path / "out"), "--agents", "gemini",
        "-k", "2", "-j", "2", "--executable", str(launcher), "--gemini-home", str(tmp_path),
        "--json",
    ]  # fmt: skip
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    return argv, environ


def held(folder: Path) -> dict[str, int]:
    """The attempts holding, by id, and their pids."""
    return {p.name: int(p.read_text()) for p in folder.iterdir() if not p.name.startswith("tmp")}


def result_ids(out: Path) -> list[str]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return [json.loads(line)["task_id"] for line in lines]


@pytest.mark.parametrize(
    ("sig", "where", "status"),
    [
        (signal.SIGTERM, "FAKE_EVAL_HOLD", 143),  # the agents' turns running
        (signal.SIGKILL, "FAKE_EVAL_HOLD_VERIFY", -9),  # the verifiers running
    ],
)
def test_a_stopped_eval_resumes_with_every_attempt_once(
    tmp_path: Path, sig: signal.Signals, where: str, status: int
) -> None:
    argv, environ = setup(tmp_path)
    out = tmp_path / "out"
    hold = tmp_path / "hold"
    hold.mkdir()
    with subprocess.Popen(
        argv, env={**environ, where: str(hold)}, stdout=subprocess.PIPE, text=True
    ) as first:
        # -j 2: the three first attempts finish, then two second attempts start and hold.
        eventually_blocking(lambda: len(held(hold)) == 2)
        first.send_signal(sig)
        progress = [json.loads(line) for line in first.communicate(timeout=60)[0].splitlines()]
    assert first.returncode == status
    assert sorted(result_ids(out)) == ["t1.gemini.1", "t2.gemini.1", "t3.gemini.1"]
    assert [p["type"] for p in progress].count("task_finished") == 3
    assert "batch_finished" not in [p["type"] for p in progress]
    for attempt, pid in held(hold).items():
        assert not alive(pid, settle=10), f"{attempt}'s process outlived the eval"
        stopped = (out / "events" / f"{attempt}.jsonl.part").read_text().splitlines()
        if sig == signal.SIGTERM:  # killed outright, the eval could not say so
            assert json.loads(stopped[-1])["message"] == STOPPED
    # Run again, holding nothing: the three others run, each once, from a fresh copy.
    again = subprocess.run(
        argv, env=environ, capture_output=True, text=True, timeout=60, check=False
    )
    assert again.returncode == 0, again.stderr
    started = json.loads(again.stdout.splitlines()[0])
    assert (started["tasks"], started["skipped"]) == (3, 3)
    assert sorted(result_ids(out)) == ATTEMPTS  # exactly once each, lines not merged
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {(r["grade"]["status"], r["attempts"]) for r in lines} == {("passed", 1)}
    assert sorted(p.name for p in (out / "events").iterdir()) == [f"{a}.jsonl" for a in ATTEMPTS]
    report = subprocess.run(
        [GEMWIRE, "eval", "report", str(out), "--json"], capture_output=True, text=True, check=True
    )
    gemini = json.loads(report.stdout)["agents"]["gemini"]
    assert (gemini["attempts"], gemini["pass_at"]) == (6, {"1": 1.0, "2": 1.0})
