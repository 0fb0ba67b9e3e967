"""`EvalOptions.commands` and ``mode``: configured agents' names and commands, checked."""

from __future__ import annotations

import pytest

from gemwire.batch.eval import EvalOptions, expand
from gemwire.batch.tasks import Task
from gemwire.errors import InvalidOptions


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"agents": ("qwen",), "commands": {"qwen": ("q",)}}, "'qwen' is a built-in agent"),
        ({"agents": ("a.b",), "commands": {"a.b": ("q",)}}, "agent name 'a.b' is not 1-64"),
        ({"agents": ("mine",), "commands": {"mine": ()}}, "agent 'mine' has an empty command"),
        ({"agents": ("mine",)}, "unknown agent 'mine'; known: claude, codex"),
        ({"agents": ("qwen",), "mode": "yolo"}, "mode is for the configured agents"),
    ],
)
def test_bad_configured_agents_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOptions, match=message):
        EvalOptions(**fields)  # type: ignore[arg-type]


def test_a_configured_agent_names_its_attempts() -> None:
    options = EvalOptions(agents=("gemini", "mine"), commands={"mine": ("my-agent",)}, k=2)
    attempts = expand([Task(id="t", prompt="p")], options)
    assert [(a.id, a.agent) for a in attempts] == [
        ("t.gemini.1", None),
        ("t.mine.1", "mine"),
        ("t.gemini.2", None),
        ("t.mine.2", "mine"),
    ]
