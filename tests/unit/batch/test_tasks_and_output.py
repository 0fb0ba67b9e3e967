"""Reading a tasks file and the output folder's crash rules, without running anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemwire.batch import FileChange, Task, TaskResult, read_results, read_tasks, summarize
from gemwire.batch.output import BatchOutput
from gemwire.errors import InvalidOptions, InvalidTasks
from gemwire.events import MessageDelta, TokenUsage, TurnError


def write_lines(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def result(
    task_id: str, *, ok: bool = True, kind: str | None = None, tokens: int = 10
) -> TaskResult:
    return TaskResult(
        task_id=task_id,
        ok=ok,
        error=TurnError(kind=kind, message=kind) if kind else None,
        answer="done",
        files_changed=[FileChange(path="a.txt", change="written")],
        usage=TokenUsage(input_tokens=tokens - 1, output_tokens=1, total_tokens=tokens),
        duration_s=float(tokens),
        attempts=1,
        session_id="s",
        resume="gemini --resume s",
        workspace="/w",
        agent="gemini",
    )


def test_tasks_get_ids_from_their_line_and_absolute_folders(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    tasks = write_lines(
        tmp_path / "tasks.jsonl",
        {"prompt": "one"},
        "",
        {"id": "b", "prompt": "two", "template": "repo", "timeout": 5, "model": "flash"},
    )
    assert read_tasks(tasks) == [
        Task(id="00001", prompt="one"),
        Task(id="b", prompt="two", template=str(tmp_path / "repo"), timeout=5, model="flash"),
    ]


def test_every_bad_line_is_named(tmp_path: Path) -> None:
    tasks = write_lines(
        tmp_path / "tasks.jsonl",
        {"id": "a", "prompt": "x"},
        {"id": "a", "prompt": "y"},
        {"id": "../up", "prompt": "z"},
        {"prompt": "w", "workspace": "missing"},
        {"prompt": "v", "colour": "red"},
        "not json",
        "[" * 5000 + "]" * 5000,
        {"prompt": " ", "timeout": -1},
    )
    with pytest.raises(InvalidTasks) as caught:
        read_tasks(tasks)
    assert caught.value.problems == [
        "line 2: id 'a' is also on line 1",
        "line 3: id '../up' is not 1-128 of A-Z a-z 0-9 . _ -",
        "line 4: workspace 'missing' is not a folder",
        "line 5: Object contains unknown field `colour`",
        "line 6: JSON is malformed: invalid character (byte 4)",
        "line 7: Expected `object`, got `array`",
        "line 8: empty prompt",
        "line 8: timeout must be over 0",
    ]


def test_a_tasks_file_that_is_not_utf8_or_empty(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"prompt": "caf\xe9"}\n')
    with pytest.raises(InvalidTasks, match="line 1: "):
        read_tasks(bad)
    with pytest.raises(InvalidTasks, match="no tasks"):
        read_tasks(write_lines(tmp_path / "empty.jsonl", ""))
    with pytest.raises(InvalidTasks, match="cannot read"):
        read_tasks(tmp_path / "nope.jsonl")


def test_a_torn_last_result_line_is_cut_and_not_finished(tmp_path: Path) -> None:
    out = BatchOutput(tmp_path)
    out.record(result("a"))
    out.close()
    with (tmp_path / "results.jsonl").open("ab") as f:
        f.write(b'{"task_id":"b","ok":tr')  # a crash mid-write
    again = BatchOutput(tmp_path)
    assert list(again.finished) == ["a"]
    again.record(result("c"))
    again.close()
    assert [r.task_id for r in read_results(tmp_path)] == ["a", "c"]


def test_one_batch_at_a_time_writes_a_folder(tmp_path: Path) -> None:
    first = BatchOutput(tmp_path)
    with pytest.raises(InvalidOptions, match="another batch is writing to"):
        BatchOutput(tmp_path)
    first.close()
    BatchOutput(tmp_path).close()


def test_events_are_in_place_only_when_committed(tmp_path: Path) -> None:
    out = BatchOutput(tmp_path)
    log = out.events_for(Task(id="t", prompt="p"))
    log.write(MessageDelta(agent="gemini", text="hi"))
    assert not (tmp_path / "events" / "t.jsonl").exists()
    log.commit()
    assert (tmp_path / "events" / "t.jsonl").read_text() == (
        '{"type":"message_delta","agent":"gemini","session_id":null,"text":"hi"}\n'
    )
    out.close()


def test_a_template_is_copied_fresh_for_each_attempt(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("a")
    out = BatchOutput(tmp_path / "out")
    task = Task(id="t", prompt="p", template=str(template))
    copy = Path(out.workspace_for(task))
    (copy / "junk").write_text("left by a crashed attempt")
    assert Path(out.workspace_for(task)) == copy == tmp_path / "out" / "workspaces" / "t"
    assert sorted(p.name for p in copy.iterdir()) == ["a.txt"]
    out.close()


def test_summary_counts_kinds_tokens_and_percentiles() -> None:
    results = [result(str(i), tokens=i) for i in range(1, 11)]
    results += [
        result("x", ok=False, kind="timeout", tokens=100),
        result("y", ok=False, kind="timeout"),
    ]
    summary = summarize(results)
    assert (summary.tasks, summary.ok, summary.failed) == (12, 10, 2)
    assert summary.by_error_kind == {"timeout": 2}
    assert (summary.total_tokens, summary.output_tokens) == (165, 12)
    assert (summary.duration_p50_s, summary.duration_p90_s, summary.duration_max_s) == (
        6.0,
        10.0,
        100.0,
    )
    assert summarize([]).tasks == 0
