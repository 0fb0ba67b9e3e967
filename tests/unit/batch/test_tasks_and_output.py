"""Reading a tasks file and the output folder's crash rules, without running anything."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import IO, Any

import pytest

from gemwire.batch import FileChange, Task, TaskResult, read_results, read_tasks, summarize
from gemwire.batch.output import STOPPED, BatchOutput
from gemwire.batch.tasks import check_tasks
from gemwire.errors import BatchOutputError, InvalidOptions, InvalidTasks
from gemwire.events import MessageDelta, TokenUsage, TurnError
from gemwire.runners.gemini_options import MAX_PROMPT_BYTES


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


def test_ids_that_differ_only_in_case_unknown_agents_and_huge_prompts_are_refused(
    tmp_path: Path,
) -> None:
    tasks = write_lines(
        tmp_path / "tasks.jsonl",
        {"id": "A", "prompt": "x"},
        {"id": "a", "prompt": "y"},
        {"id": "b", "prompt": "z", "agent": "goose"},
        {"id": "c", "prompt": "p" * (MAX_PROMPT_BYTES + 1)},
        {"id": "d", "prompt": "p" * MAX_PROMPT_BYTES},
    )
    with pytest.raises(InvalidTasks) as caught:
        read_tasks(tasks)
    assert caught.value.problems == [
        (
            "line 2: id 'a' differs from 'A' (line 1) only in case: they would be one file on a "
            "case-insensitive file system"
        ),
        "line 3: unknown agent 'goose'; known: claude, codex, qwen, opencode, gemini, antigravity",
        (
            f"line 4: the prompt is {MAX_PROMPT_BYTES + 1} bytes; Gemini CLI reads at most "
            f"{MAX_PROMPT_BYTES} from stdin"
        ),
    ]


def test_tasks_made_in_code_are_checked_as_a_file_is() -> None:
    with pytest.raises(InvalidTasks) as caught:
        check_tasks(
            [
                Task(id="A", prompt="x"),
                Task(id="a", prompt="y", agent="goose"),
                Task(id="A", prompt="z"),
                Task(prompt="no id"),
            ]
        )
    assert caught.value.problems == [
        "task 2: unknown agent 'goose'; known: claude, codex, qwen, opencode, gemini, antigravity",
        (
            "task 2: id 'a' differs from 'A' (task 1) only in case: they would be one file on "
            "a case-insensitive file system"
        ),
        "task 3: id 'A' is also on task 1",
        "task 4: id '' is not 1-128 of A-Z a-z 0-9 . _ -",
    ]


def test_a_bad_line_before_the_last_stops_the_batch_and_keeps_every_line(
    tmp_path: Path,
) -> None:
    out = BatchOutput(tmp_path)
    out.record(result("a"))
    out.close()
    path = tmp_path / "results.jsonl"
    with path.open("ab") as f:
        f.write(b'{"task_id": "b", "ok": true}\n')  # not a whole result
        f.write(json.dumps({"task_id": "c"}).encode() + b"\n")
    before = path.read_bytes()
    with pytest.raises(BatchOutputError) as caught:
        BatchOutput(tmp_path)
    assert str(caught.value) == (
        f"{path} line 2 is not a task's result (Object missing required field `error`); "
        "nothing was changed: fix or delete that line, then run again"
    )
    with pytest.raises(BatchOutputError, match="line 2 is not a task's result"):
        read_results(tmp_path)
    assert path.read_bytes() == before
    BatchOutput(tmp_path / "elsewhere").close()  # the lock was let go
    path.write_bytes(before.splitlines(keepends=True)[0])
    BatchOutput(tmp_path).close()


class FullDisk:
    """A file with ``room`` bytes left: a write past it writes what fits, then the next
    one fails as a full disk does."""

    def __init__(self, file: IO[bytes], room: int) -> None:
        self._file = file
        self.room = room

    def write(self, data: bytes | memoryview) -> int:
        if not self.room and len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        taken = min(self.room, len(data))
        self.room -= taken
        return self._file.write(data[:taken])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def full_after(room: int, name: str) -> Any:
    """An opener whose ``name`` files have ``room`` bytes left."""

    def opener(file: Path, mode: str, buffering: int) -> Any:
        opened = open(file, mode, buffering)  # noqa: SIM115 (the output closes it)
        return FullDisk(opened, room) if file.name == name else opened

    return opener


def test_a_full_disk_undoes_the_torn_result_and_loses_no_finished_one(tmp_path: Path) -> None:
    first = len(msgspec_line(result("a")))
    out = BatchOutput(tmp_path, opener=full_after(first + 10, "results.jsonl"))
    out.record(result("a"))
    with pytest.raises(BatchOutputError) as caught:
        out.record(result("b"))
    assert str(caught.value) == (
        f"cannot write {tmp_path / 'results.jsonl'}: No space left on device; the results "
        "before b's are on disk, and a re-run starts the rest"
    )
    assert list(out.finished) == ["a"]
    out.close()
    assert (tmp_path / "results.jsonl").read_bytes() == msgspec_line(result("a"))
    again = BatchOutput(tmp_path)
    assert list(again.finished) == ["a"]
    again.close()


def test_a_full_disk_while_writing_events_is_a_batch_output_error(tmp_path: Path) -> None:
    out = BatchOutput(tmp_path, opener=full_after(0, "t.jsonl.part"))
    log = out.events_for(Task(id="t", prompt="p"))
    with pytest.raises(BatchOutputError, match=r"t\.jsonl\.part: No space left on device$"):
        log.write(MessageDelta(agent="gemini", text="hi"))
    log.stop("gemini")  # what the engine does next: quiet, though the disk is still full
    assert not (tmp_path / "events" / "t.jsonl").exists()
    out.close()


def test_a_stopped_task_leaves_its_partial_events_ended_by_a_notice(tmp_path: Path) -> None:
    out = BatchOutput(tmp_path)
    log = out.events_for(Task(id="t", prompt="p"))
    log.write(MessageDelta(agent="acp:x", session_id="s1", text="hi"))
    log.stop("acp:fallback")
    lines = (tmp_path / "events" / "t.jsonl.part").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"type": "message_delta", "agent": "acp:x", "session_id": "s1", "text": "hi"},
        {
            "type": "notice",
            "agent": "acp:x",
            "session_id": "s1",
            "severity": "warning",
            "message": STOPPED,
            "source": "gemwire",
        },
    ]
    out.close()


def msgspec_line(value: TaskResult) -> bytes:
    import msgspec

    return msgspec.json.encode(value) + b"\n"
