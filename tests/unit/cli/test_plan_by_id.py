"""A plan by id that comes as Markdown or a file (ACP's ``plan_update``: Codex's plan mode, once
the client declares ``plan``) reads in the live view, as entries do."""

from __future__ import annotations

import io

from rich.console import Console

from gemwire.cli import render
from gemwire.events import PlanEntry, PlanUpdated


def shown(event: PlanUpdated) -> str:
    out = io.StringIO()
    Console(file=out, width=60, color_system=None).print(render.plan(event))
    return out.getvalue()


def test_a_markdown_plan_shows_its_lines() -> None:
    event = PlanUpdated(agent="acp:codex", entries=[], plan_id="p", markdown="# Plan\n1. Read")
    assert shown(event) == "Plan\n  # Plan\n  1. Read\n"


def test_a_file_plan_shows_its_uri_and_entries_stay_as_they_were() -> None:
    event = PlanUpdated(agent="acp:x", entries=[], plan_id="p", uri="file:///plan.md")
    assert shown(event) == "Plan\n  file:///plan.md\n"
    entries = [PlanEntry(content="Read", status="completed")]
    assert "Read" in shown(PlanUpdated(agent="acp:x", entries=entries))
