"""``gemwire eval export --format atif``: each attempt as an ATIF v1.4 trajectory, checked
against the RFC's tables (tests/kit/atif_spec.py), from events real agents produced."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from kit.atif_spec import check

from gemwire import replay_gemini_stream
from gemwire.batch import read_results
from gemwire.batch.atif import export_atif, trajectory
from gemwire.batch.results import FileChange, Grade, ReportedCost, TaskResult
from gemwire.cli import main
from gemwire.events import (
    Event,
    MessageDelta,
    ThoughtDelta,
    TokenUsage,
    TurnError,
    UserMessage,
    decode_event,
    encode_events,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GOLDEN = sorted((FIXTURES / "acp").glob("**/*.jsonl"))
STREAMS = sorted((FIXTURES / "gemini" / "0.61.0").glob("*/stream-json/run-1.stdout"))


def golden(path: Path) -> list[Event]:
    return [decode_event(line) for line in path.read_bytes().splitlines() if line.strip()]


def result(**fields: object) -> TaskResult:
    base: dict[str, object] = {
        "task_id": "add.qwen.2",
        "ok": True,
        "error": None,
        "answer": "",
        "files_changed": [],
        "usage": None,
        "duration_s": 1.5,
        "attempts": 1,
        "session_id": "s-1",
        "resume": None,
        "workspace": "/out/workspaces/add.qwen.2",
        "agent": "qwen",
    }
    return TaskResult(**{**base, **fields})  # type: ignore[arg-type]


def atif(task: TaskResult, events: list[Event]) -> bytes:
    return msgspec.json.encode(trajectory(task, events))


@pytest.mark.parametrize("path", GOLDEN + STREAMS, ids=lambda p: "/".join(p.parts[-3:]))
def test_every_recorded_turn_is_a_trajectory_the_rfc_allows(path: Path) -> None:
    events = (
        golden(path)
        if path.suffix == ".jsonl"
        else list(replay_gemini_stream([path.read_bytes()], cwd="/w"))
    )
    root = check(atif(result(), events))
    calls = [e for e in events if e.type == "tool_call_started"]
    assert sum(len(s.tool_calls or ()) for s in root.steps) == len(calls)
    prompts = [e.text for e in events if isinstance(e, UserMessage)]
    assert [s.message for s in root.steps if s.source == "user"] == prompts


def test_a_shell_call_is_one_agent_step_with_its_result_and_the_answer_another() -> None:
    # Qwen Code 0.24.4: "On it." with the call, its text while it runs, its output, the answer.
    events = golden(FIXTURES / "acp" / "qwen" / "shell.jsonl")
    usage = TokenUsage(input_tokens=120, output_tokens=30, cached_tokens=20, total_tokens=150)
    graded = Grade(status="passed", reward=1.0, exit_code=0, output="", duration_s=0.2)
    task = result(
        usage=usage,
        grade=graded,
        agent_cost=ReportedCost(amount=0.25, currency="USD"),
        files_changed=[FileChange(path="calc.py", change="modified")],
    )
    document = msgspec.json.decode(atif(task, events))
    call = next(e for e in events if e.type == "tool_call_started")
    finished = next(e for e in events if e.type == "tool_call_finished")
    texts = [e.text for e in events if isinstance(e, MessageDelta)]
    assert (
        document
        == {
            "schema_version": "ATIF-v1.4",
            "session_id": "s-1",
            "agent": {"name": "qwen", "version": "0.24.4", "model_name": events[0].model},  # type: ignore[union-attr]
            "steps": [
                {"step_id": 1, "source": "user", "message": "go"},
                {
                    "step_id": 2,
                    "source": "agent",
                    "message": texts[0],
                    "tool_calls": [
                        {
                            "tool_call_id": call.call_id,  # type: ignore[union-attr]
                            "function_name": call.name,  # type: ignore[union-attr]
                            "arguments": call.input,  # type: ignore[union-attr]
                        }
                    ],
                    "observation": {
                        "results": [
                            {"source_call_id": call.call_id, "content": finished.output}  # type: ignore[union-attr]
                        ]
                    },
                },
                {"step_id": 3, "source": "agent", "message": "".join(texts[1:])},
            ],
            "final_metrics": {
                "total_prompt_tokens": 120,
                "total_completion_tokens": 30,
                "total_cached_tokens": 20,
                "total_cost_usd": 0.25,
                "total_steps": 3,
            },
            "extra": {
                "gemwire": {
                    "attempt_id": "add.qwen.2",
                    "task_id": "add",
                    "attempt": 2,
                    "ok": True,
                    "error_kind": None,
                    "reward": 1.0,
                    "grade_status": "passed",
                    "duration_s": 1.5,
                    "files_changed": ["calc.py"],
                }
            },
        }
    )


def test_thoughts_are_the_reasoning_and_a_failed_turn_is_in_the_notes() -> None:
    events = golden(FIXTURES / "acp" / "gemini" / "answer.jsonl")
    thought = "".join(e.text for e in events if isinstance(e, ThoughtDelta))
    error = TurnError(kind="timeout", message="gemwire stopped the turn after 120 s")
    root = check(atif(result(ok=False, error=error), events))
    [agent_step] = [s for s in root.steps if s.source == "agent"]
    assert thought
    assert agent_step.reasoning_content == thought
    assert root.notes == "timeout: gemwire stopped the turn after 120 s"
    assert root.final_metrics is not None
    assert root.final_metrics.total_cost_usd is None  # no usage, no reported cost


def test_a_failed_tool_call_s_observation_is_its_error() -> None:
    # Qwen Code 0.24.4 reads a file, then fails to edit it.
    events = golden(FIXTURES / "acp" / "qwen" / "tool_error.jsonl")
    failed = [e for e in events if e.type == "tool_call_finished" and e.error]  # type: ignore[union-attr]
    root = check(atif(result(), events))
    observed = [r for s in root.steps if s.observation for r in s.observation.results]
    assert [(r.source_call_id, r.content) for r in observed] == [
        ("call_gemwire_0_0", "nothing to replace\n"),
        ("call_gemwire_1_0", failed[0].error.message),  # type: ignore[union-attr]
    ]


def test_export_writes_one_trajectory_per_attempt_and_the_command_line_says_where(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    (out / "events").mkdir(parents=True)
    events = golden(FIXTURES / "acp" / "qwen" / "shell.jsonl")
    lines = b""
    for task_id in ("add.qwen.1", "add.qwen.2"):
        (out / "events" / f"{task_id}.jsonl").write_bytes(encode_events(events))
        lines += msgspec.json.encode(result(task_id=task_id)) + b"\n"
    (out / "results.jsonl").write_bytes(lines)
    assert [r.task_id for r in read_results(out)] == ["add.qwen.1", "add.qwen.2"]
    ran = CliRunner().invoke(main, ["eval", "export", str(out), "--format", "atif"])
    assert ran.exit_code == 0, ran.output
    assert ran.stdout == f"2 trajectories in {out / 'atif'}\n"
    for task_id in ("add.qwen.1", "add.qwen.2"):
        root = check((out / "atif" / f"{task_id}.json").read_bytes())
        assert root.extra == {
            "gemwire": msgspec.json.decode(atif(result(task_id=task_id), events))["extra"][
                "gemwire"
            ]
        }
    assert export_atif(out, tmp_path / "again") == [
        tmp_path / "again" / "add.qwen.1.json",
        tmp_path / "again" / "add.qwen.2.json",
    ]


def test_a_damaged_events_file_is_one_line_and_exit_74(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "events").mkdir(parents=True)
    (out / "events" / "add.qwen.1.jsonl").write_bytes(b'{"type": "message_delta", "agent"\n')
    (out / "results.jsonl").write_bytes(msgspec.json.encode(result(task_id="add.qwen.1")) + b"\n")
    ran = CliRunner().invoke(main, ["eval", "export", str(out)])
    assert ran.exit_code == 74
    assert ran.stderr.startswith(f"gemwire: an events file of {out} is damaged: ")
    assert ran.stderr.count("\n") == 1
