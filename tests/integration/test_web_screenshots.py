"""The screenshots of README and docs/web.md, taken from the real page: a coding session with
an ACP agent (scripted for the picture) in a folder named ``project``: reasoning, a plan, a
read, an edit with its diff, a test run, the cost badge and the context meter, an answer in
Markdown. Each run checks what the pictures must show (no temporary path anywhere, the
composer leaving the conversation room at 390 px); ``--update-golden`` writes them to
docs/images (review them before committing):

    .venv/bin/pytest tests/integration/test_web_screenshots.py --update-golden
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from kit.browser import Watched, watched_page
from kit.web import LiveServer, ScriptedAgents, WebAgent, live_server
from playwright.sync_api import Browser, Page, expect

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server.agents import AgentEntry
from gemwire.testing import AgentScenario, ScriptedAgent
from gemwire.wire import acp

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
PROMPT = "The test for parse_date fails on dates with a time. Fix it."
BEFORE = """from datetime import date


def parse_date(text: str) -> date:
    return date.fromisoformat(text)
"""
AFTER = '''from datetime import date, datetime


def parse_date(text: str) -> date:
    """A day, from an ISO date or an ISO date and time."""
    return datetime.fromisoformat(text).date()
'''
TEST = """from dates import parse_date


def test_a_time_is_ignored():
    assert str(parse_date("2026-11-25T09:30")) == "2026-11-25"
"""
ANSWER = """Fixed: `parse_date` read only dates, so `"2026-11-25T09:30"` raised a `ValueError`.

- `dates.py`: it now parses with **`datetime.fromisoformat`** and keeps the day.
- The tests pass (3 passed).
"""


async def tool(agent: ScriptedAgent, sid: str, **update: Any) -> None:
    await agent.send({"method": "session/update", "params": {"sessionId": sid, "update": update}})


def plan(*done: bool, doing: int | None = None) -> list[dict[str, str]]:
    steps = ["Read the failing test", "Fix parse_date", "Run the tests"]
    return [
        {
            "content": step,
            "priority": "high",
            "status": "completed" if n < len(done) and done[n] else
            "in_progress" if n == doing else "pending",
        }
        for n, step in enumerate(steps)
    ]  # fmt: skip


async def session(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    assert isinstance(agent, WebAgent)
    cwd = Path(agent.cwd)
    thought = "The test passes a date with a time; `date.fromisoformat` rejects that."
    await agent.update(sid, "agent_thought_chunk", content={"type": "text", "text": thought})
    await agent.update(sid, "plan", entries=plan(doing=0))
    await agent.say(sid, "Let me read the failing test first.")
    test = str(cwd / "tests" / "test_dates.py")
    await tool(agent, sid, sessionUpdate="tool_call", toolCallId="read-1", kind="read",
               title="Read tests/test_dates.py", status="in_progress",
               rawInput={"file_path": test}, locations=[{"path": test}])  # fmt: skip
    text = {"type": "content", "content": {"type": "text", "text": TEST}}
    await agent.update(sid, "tool_call_update", toolCallId="read-1", status="completed",
                       content=[text])  # fmt: skip
    await agent.update(sid, "plan", entries=plan(True, doing=1))
    source = str(cwd / "dates.py")
    await tool(agent, sid, sessionUpdate="tool_call", toolCallId="edit-1", kind="edit",
               title="Edit dates.py", status="pending",
               rawInput={"file_path": source, "old_string": "date.fromisoformat(text)",
                         "new_string": "datetime.fromisoformat(text).date()"},
               locations=[{"path": source, "line": 4}])  # fmt: skip
    await anyio.Path(source).write_text(AFTER, encoding="utf-8")
    diff = {"type": "diff", "path": source, "oldText": BEFORE, "newText": AFTER}
    await agent.update(sid, "tool_call_update", toolCallId="edit-1", status="completed",
                       content=[diff])  # fmt: skip
    await agent.update(sid, "plan", entries=plan(True, True, doing=2))
    await tool(agent, sid, sessionUpdate="tool_call", toolCallId="run-1", kind="execute",
               title="pytest -q", status="in_progress", rawInput={"command": "pytest -q"})  # fmt: skip
    passed = {"type": "content", "content": {"type": "text", "text": "...\n3 passed in 0.04s"}}
    await agent.update(sid, "tool_call_update", toolCallId="run-1", status="completed",
                       content=[passed])  # fmt: skip
    await agent.update(sid, "plan", entries=plan(True, True, True))
    cost = {"amount": 0.0213, "currency": "USD"}
    await agent.update(sid, "usage_update", used=18_400, size=1_048_576, cost=cost)
    await agent.say(sid, ANSWER)
    return "end_turn"


class Example(ScriptedAgents):
    """One agent, ``example``: a `WebAgent` playing `session`."""

    def agents(self) -> list[AgentEntry]:
        return [
            AgentEntry(
                name="example", title="Example agent", transport="acp", available=True, command=[]
            )
        ]

    def options(self, name: str, cwd: str) -> AcpOptions:
        # Its mode chosen: gemwire does not know example-agent's (a server session of it
        # would be refused), and the scripted agent asks where its scenario asks.
        return AcpOptions(cwd=cwd, mode="default")

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        info = acp.Implementation(name="example-agent", version="1.0")
        agent = WebAgent(agent_end, AgentScenario(agent_info=info), on_prompt=self.on_prompt)
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "dates.py").write_text(BEFORE)
    (project / "tests" / "test_dates.py").write_text(TEST)

    def launcher(tg: TaskGroup) -> Example:
        return Example(tg, session)

    with live_server(str(project), str(tmp_path / "state"), launcher=launcher) as running:
        yield running


def conversation(page: Page, server: LiveServer) -> None:
    page.goto(f"{server.origin}/#/chat")
    page.get_by_label("Permissions").select_option("edits")
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Message").fill(PROMPT)
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".turn")).to_have_text(re.compile(r"Done · end_turn · [\d.]+ m?s"))
    expect(page.locator(".meters .badge.cost")).to_have_text("≈ $0.02 (estimate)")
    expect(page.locator(".answer .text.md ul li")).to_have_count(2)
    page.evaluate("document.activeElement.blur()")


def test_the_screenshots_show_a_session_in_its_folder_at_1280_and_390_px(
    chromium_browser: Browser, server: LiveServer, tmp_path: Path, update_golden: bool
) -> None:
    with watched_page(chromium_browser, allowed=server.same_origin) as watched:
        page = watched.page
        server.log_in(page)
        page.set_viewport_size({"width": 1280, "height": 1000})
        conversation(page, server)
        shots = {}
        for width, height in ((1280, 1000), (390, 1400)):
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("window.scrollTo(0, 0)")
            shots[width] = tmp_path / f"web-conversation-{width}.png"
            page.screenshot(path=str(shots[width]))
            check(watched, width)
        assert watched.problems == []
    if update_golden:
        for width, shot in shots.items():
            (IMAGES / f"web-conversation-{width}.png").write_bytes(shot.read_bytes())


def check(watched: Watched, width: int) -> None:
    page = watched.page
    shown = page.evaluate("document.body.innerText")
    assert "/tmp" not in shown
    assert "scripted" not in shown.lower()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    viewport = page.viewport_size
    assert viewport is not None
    composer = page.locator(".composer").bounding_box()
    diff = page.locator(".card.kind-edit pre.diff").bounding_box()
    assert composer is not None
    assert diff is not None
    # The edit's diff is in the picture, above the composer, which leaves the page room.
    assert diff["y"] >= 0
    assert diff["y"] + diff["height"] <= composer["y"]
    assert composer["height"] <= viewport["height"] * (0.2 if width < 600 else 0.25)
    # The title, the cost badge and the plan are in the picture too; at 390 px the header
    # is one line and all of its links fit.
    for selector in (".session-title", ".meters .badge.cost", ".plan-box"):
        box = page.locator(selector).bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= composer["y"], selector
    header = page.locator("header.top").bounding_box()
    assert header is not None
    assert header["height"] <= 48
    assert page.evaluate(
        "document.querySelector('nav').scrollWidth <= document.querySelector('nav').clientWidth"
    )
