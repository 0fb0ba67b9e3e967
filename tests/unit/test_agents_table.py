"""docs/agents.md's table says which session methods each pinned agent offers: the same as
the agent's recorded ``initialize`` answer (tests/fixtures/acp/<agent>/answer.frames)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kit.corpus import AGENT_GOLDEN

from gemwire.runners.agents import AGENTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
NAMES = {"list": "list", "resume": "resume", "close": "close", "fork": "fork", "delete": "delete"}


def row(title: str) -> dict[str, str]:
    """The table's row whose first cell is ``title``, by agent."""
    lines = DOC.read_text().splitlines()
    header = next(line for line in lines if line.startswith("| | claude |"))
    agents = [cell.strip() for cell in header.strip("|").split("|")][1:]
    line = next(line for line in lines if line.startswith(f"| {title} |"))
    cells = [cell.strip() for cell in line.strip("|").split("|")][1:]
    return dict(zip(agents, cells, strict=True))


def initialize_answer(agent: str) -> dict[str, Any]:
    for line in (AGENT_GOLDEN / agent / "answer.frames").read_text().splitlines():
        frame = json.loads(line[2:])
        if line.startswith("< ") and "agentCapabilities" in frame.get("result", {}):
            result: dict[str, Any] = frame["result"]
            return result
    raise AssertionError(f"{agent}: no initialize answer recorded")


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_table_names_the_session_methods_the_agent_offers(agent: str) -> None:
    capabilities = initialize_answer(agent)["agentCapabilities"]
    offered = sorted(capabilities.get("sessionCapabilities") or {})
    cell = row("`session/load`")[agent]
    assert cell.startswith("yes") == bool(capabilities.get("loadSession"))
    said = sorted(word for word in NAMES if word in cell.replace("logout", ""))
    assert said == offered
    assert ("`logout`" in cell) == ("logout" in (capabilities.get("auth") or {}))


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_table_names_the_agent_s_auth_methods(agent: str) -> None:
    methods = [m["id"] for m in initialize_answer(agent).get("authMethods", [])]
    assert row("auth methods")[agent] == ", ".join(f"`{m}`" for m in methods)
