from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gemwire.errors import ScenarioError
from gemwire.testing import (
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Reply,
    Scenario,
    Text,
    Thought,
    Usage,
    load_scenario,
    seed_workspace,
)
from gemwire.testing.scenario import MAX_SCENARIO_BYTES

JSON_SCENARIO = {
    "files": {"src/app.py": "x = 1\n"},
    "turns": [
        {
            "type": "reply",
            "chunks": [
                {"type": "thought", "text": "**Plan**"},
                {"type": "text", "text": "hi"},
                {"type": "function_call", "name": "read_file", "args": {"file_path": "a"}},
                {
                    "type": "function_calls",
                    "calls": [{"name": "glob", "args": {"pattern": "*"}, "id": "c1"}],
                },
                {"type": "delay", "seconds": 0.5},
            ],
            "usage": {"prompt": 7, "output": 3},
            "repeat": 2,
        },
        {"type": "error", "status": 429, "retry_delay": 1.5},
    ],
}


def test_json_and_python_forms_are_the_same_scenario() -> None:
    expected = Scenario(
        files={"src/app.py": "x = 1\n"},
        turns=[
            Reply(
                [
                    Thought("**Plan**"),
                    Text("hi"),
                    FunctionCall("read_file", {"file_path": "a"}),
                    FunctionCalls([FunctionCall("glob", {"pattern": "*"}, id="c1")]),
                    Delay(0.5),
                ],
                usage=Usage(prompt=7, output=3),
                repeat=2,
            ),
            Fail(429, retry_delay=1.5),
        ],
    )
    assert load_scenario(json.dumps(JSON_SCENARIO)) == expected
    assert [type(t).__name__ for t in expected.expanded_turns()] == ["Reply", "Reply", "Fail"]


def test_load_from_path(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"turns": []}))
    assert load_scenario(path) == Scenario(turns=[])


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"turns": [{"type": "reply", "chunks": [{"type": "text", "text": 5}]}]},
            "Expected `str`, got `int` - at `$.turns[0].chunks[0].text`",
        ),
        (
            {"turns": [{"type": "reply", "chunks": [{"type": "txt", "text": "a"}]}]},
            "Invalid value 'txt' - at `$.turns[0].chunks[0].type`",
        ),
        (
            {"turns": [{"type": "error", "status": 200}]},
            "Expected `int` >= 400 - at `$.turns[0].status`",
        ),
        (
            {"turns": [{"type": "reply", "repeat": 0}]},
            "Expected `int` >= 1 - at `$.turns[0].repeat`",
        ),
        (
            {"turns": [], "files": {"../escape.txt": ""}},
            "workspace file '../escape.txt' must be a relative path inside the workspace",
        ),
        (
            {"turns": [], "files": {"/etc/passwd": ""}},
            "workspace file '/etc/passwd' must be a relative path inside the workspace",
        ),
        (
            {"turns": [{"type": "reply", "chunks": [{"type": "function_calls", "calls": []}]}]},
            "function_calls needs at least one call - at `$.turns[0].chunks[0]`",
        ),
        ({"files": {}}, "Object missing required field `turns`"),
    ],
)
def test_bad_scenarios_name_the_problem_and_where(document: object, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(json.dumps(document))
    assert str(caught.value) == f"scenario: {message}"


def test_not_json_at_all(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{turns: [")
    with pytest.raises(ScenarioError, match=r"^.*broken\.json: JSON is malformed"):
        load_scenario(path)


def test_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path / "nope.json")
    assert str(caught.value) == f"{tmp_path / 'nope.json'}: cannot read: No such file or directory"


def test_a_fifo_a_device_a_huge_file_or_deep_nesting_is_a_scenario_error(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    huge = tmp_path / "huge.json"
    with huge.open("wb") as file:
        file.truncate(MAX_SCENARIO_BYTES + 1)
    deep = tmp_path / "deep.json"
    nested = "[" * 100_000 + "]" * 100_000  # in a tool call's arguments, which take any JSON
    call = f'{{"type": "function_call", "name": "x", "args": {{"a": {nested}}}}}'
    deep.write_text(f'{{"turns": [{{"type": "reply", "chunks": [{call}]}}]}}')
    expected = {
        fifo: "not a regular file",
        Path("/dev/zero"): "not a regular file",
        huge: f"{MAX_SCENARIO_BYTES + 1:,} bytes, over {MAX_SCENARIO_BYTES:,}",
        deep: "nested too deeply",
    }
    for path, message in expected.items():
        with pytest.raises(ScenarioError) as caught:
            load_scenario(path)
        assert str(caught.value) == f"{path}: {message}"


def test_python_construction_validates_too() -> None:
    with pytest.raises(ScenarioError, match="must be a relative path"):
        Scenario(turns=[], files={"a/../../b": ""})


def test_error_bodies_follow_the_google_shape() -> None:
    assert Fail(503).body() == {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    }
    assert Fail(429, retry_delay=2, quota_id="PerDay").body()["error"]["details"] == [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [
                {
                    "quotaMetric": "generativelanguage.googleapis.com/"
                    "generate_content_free_tier_requests",
                    "quotaId": "PerDay",
                    "quotaValue": "10",
                }
            ],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"},
    ]


def test_seed_workspace_writes_nested_files(tmp_path: Path) -> None:
    seed_workspace(tmp_path, {"a.txt": "A", "deep/er/b.txt": "B"})
    assert (tmp_path / "a.txt").read_text() == "A"
    assert (tmp_path / "deep/er/b.txt").read_text() == "B"
