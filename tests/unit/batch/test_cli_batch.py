"""``gemwire batch`` and ``batch report`` on output folders that cannot be used as they are."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from gemwire.batch import FileChange, TaskResult
from gemwire.batch.output import BatchOutput
from gemwire.cli import main
from gemwire.cli.batch import _progress_bar
from gemwire.cli.exit_codes import EXIT_IO
from gemwire.events import TurnError


def result(task_id: str, *, ok: bool = True) -> TaskResult:
    return TaskResult(
        task_id=task_id,
        ok=ok,
        error=None if ok else TurnError(kind="timeout", message="the task took longer than 5 s"),
        answer="done",
        files_changed=[FileChange(path="a.txt", change="written")],
        usage=None,
        duration_s=1.0,
        attempts=1,
        session_id="s",
        resume=None,
        workspace="/w",
        agent="gemini",
    )


def damaged(out: Path) -> bytes:
    """An output folder whose results.jsonl has a bad line between two good ones."""
    folder = BatchOutput(out)
    folder.record(result("t0"))
    folder.close()
    with (out / "results.jsonl").open("ab") as f:
        f.write(b"\x00garbage\n")
        f.write(json.dumps({"task_id": "t1"}).encode() + b"\n")
    return (out / "results.jsonl").read_bytes()


def test_a_damaged_results_file_is_one_line_and_exit_74_and_nothing_is_cut(tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = damaged(out)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "t0", "prompt": "p"}\n{"id": "t2", "prompt": "p"}\n')
    for args in (["batch", str(tasks), "-o", str(out)], ["batch", "report", str(out)]):
        done = CliRunner().invoke(main, args)
        assert done.exit_code == EXIT_IO == 74
        assert done.stderr.splitlines() == [
            (
                f"gemwire: {out / 'results.jsonl'} line 2 is not a task's result (JSON is "
                "malformed: invalid character (byte 0)); nothing was changed: fix or delete that "
                "line, then run again"
            )
        ]
        assert done.stdout == ""
    assert (out / "results.jsonl").read_bytes() == before


def test_report_lists_the_failed_tasks(tmp_path: Path) -> None:
    folder = BatchOutput(tmp_path)
    for task_id, ok in (("t0", True), ("t1", False), ("t2", True), ("[red]t3", False)):
        folder.record(result(task_id, ok=ok))
    folder.close()
    done = CliRunner().invoke(main, ["batch", "report", str(tmp_path)], terminal_width=100)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    listed = lines[[line.strip() for line in lines].index("failed tasks") + 1 :]
    assert [line.split() for line in listed] == [
        ["t1", "timeout", "the", "task", "took", "longer", "than", "5", "s"],
        ["[red]t3", "timeout", "the", "task", "took", "longer", "than", "5", "s"],
        ["re-run", "with", "--retry-failed", "to", "run", "them", "again"],
    ]
    as_json = CliRunner().invoke(main, ["batch", "report", str(tmp_path), "--json"])
    assert json.loads(as_json.stdout)["failed_tasks"] == ["t1", "[red]t3"]


@pytest.mark.parametrize("width", [80, 100, 120, 160])
def test_the_progress_bar_reads_whole_from_80_columns(width: int) -> None:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    bar = _progress_bar(console)
    bar.add_task(
        "batch", total=1000, completed=999, failed=120, running=8, tokens=1234567, rate=9.5
    )
    console.print(bar.make_tasks_table(bar.tasks))
    [line] = console.export_text().splitlines()
    counts = "999/1000 · 120 failed · 8 running"
    if width >= 120:
        counts += " · 9.5/min · 1234567 tokens"
    assert re.fullmatch(
        rf"tasks [━╺╸ ]+ {counts} · \d:\d\d:\d\d · ETA (-:--:--|\d:\d\d:\d\d) *", line
    )
    assert len(line.rstrip()) <= width
