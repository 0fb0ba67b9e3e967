"""The page's Batches view in a real browser, on the real server app: a batch started from a
tasks file, its progress moving live, failures by kind, a task's events in the conversation
view, and a retry of the failed task. The agents are a scripted executor (as in
tests/unit/server/test_routes_batches.py), run in the server's thread."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import anyio
import pytest
from kit.browser import watched_page
from kit.web import live_server
from playwright.sync_api import Browser, Page, expect

from gemwire.batch import Task, runner as batch_runner
from gemwire.events import Event, FileChanged, MessageDelta, TokenUsage, TurnError


@dataclass
class Outcome:
    ok: bool = True
    error: TurnError | None = None
    answer: str = "done"
    files_changed: list[FileChanged] = field(default_factory=list)
    usage: TokenUsage | None = None
    session_id: str | None = "s"


class Scripted:
    """Each task says its prompt; ``t2`` fails (kind ``auth``) the first time, ``t3`` waits
    for ``gate`` (a thread's event: the test runs in another thread than the server)."""

    def __init__(self) -> None:
        self.failing = {"t2"}
        self.gate = threading.Event()

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        on_event(MessageDelta(agent="acp:scripted", text=task.prompt))
        if task.id == "t3":
            await anyio.to_thread.run_sync(self.gate.wait)
        if task.id in self.failing:
            self.failing.discard(task.id)
            return Outcome(ok=False, error=TurnError(kind="auth", message="no key"), answer="")
        return Outcome(answer=f"did {task.prompt}")

    def agent_of(self, task: Task) -> str:
        return "acp:scripted"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


def texts(page: Page, selector: str) -> list[str]:
    found: list[str] = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(e => e.textContent)", selector
    )
    return found


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Scripted]:
    executor = Scripted()
    monkeypatch.setattr(batch_runner, "_executor", lambda options: executor)
    yield executor
    executor.gate.set()


def test_a_batch_starts_moves_fails_by_kind_and_retries(
    chromium_browser: Browser, scripted: Scripted, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    (root / "repo").mkdir(parents=True)
    lines = [{"id": f"t{i}", "prompt": f"p{i}", "workspace": "repo"} for i in (1, 2, 3)]
    (root / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    agents = {"scripted": ("scripted",)}
    with (
        live_server(str(root), str(tmp_path / "state"), agents=agents) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        page.goto(f"{server.origin}/#/batches")
        expect(page.get_by_text("No batch yet.")).to_be_visible()
        # Every field says what it is, on the page (not only to a screen reader).
        assert texts(page, ".start-batch label .label") == [
            "Tasks file", "Agent", "Output folder", "Concurrency", "Permissions"
        ]  # fmt: skip
        assert texts(page, ".open-batch label .label") == ["Output folder to open"]
        page.get_by_label("Tasks file").fill(str(root / "tasks.jsonl"))
        page.get_by_label("Output folder", exact=True).fill(str(root / "out"))
        page.get_by_label("Agent").select_option("scripted")
        page.get_by_label("Concurrency").fill("1")
        page.get_by_role("button", name="Start").click()
        expect(page).to_have_url(re.compile(r".*#/batches/b_[0-9a-f]{16}$"))
        figure = page.locator(".figures .figure")
        # t3 holds the batch: t1 and t2 are done (t2 failed), t3 is running.
        # "finished" counts the failed task too; "ok" does not (the tasks table says ok the same way).
        expect(figure).to_have_text(["2 finished", "1 ok", "1 failed", "1 running", "0 pending"])
        expect(page.locator(".failed-kinds li")).to_have_text(["auth: 1"])
        expect(page.locator("tr.task")).to_have_count(3)
        assert texts(page, "tr.task td.status") == ["ok", "failed", "running"]
        scripted.gate.set()
        expect(figure).to_have_text(["3 finished", "2 ok", "1 failed", "0 running", "0 pending"])
        assert texts(page, "tr.task td.status") == ["ok", "failed", "ok"]
        assert texts(page, "tr.task td.kind") == ["", "auth", ""]
        # The Attempts column's header sits over its numbers (both right-aligned).
        aligned = page.evaluate(
            "[...document.querySelectorAll('.tasks tr > :nth-child(3)')]"
            ".map(c => getComputedStyle(c).textAlign)"
        )
        assert aligned == ["right"] * 4
        # A failed task's page says how it failed, and how long it took.
        page.get_by_role("link", name="t2").click()
        expect(page.locator(".task-result .error")).to_have_text("auth: no key")
        facts = texts(page, ".task-result .facts span")
        assert facts[:2] == ["failed", "1 attempt"]
        assert re.fullmatch(r"\d+ ms|[\d.]+ s", facts[2]), facts
        expect(page.locator(".answer .text")).to_have_text(["p2"])
        page.get_by_role("link", name="← Batch").click()
        page.get_by_role("button", name="Retry failed").click()
        expect(figure).to_have_text(["3 finished", "3 ok", "0 failed", "0 running", "0 pending"])
        expect(page.locator(".failed-kinds li")).to_have_count(0)
        expect(page.get_by_role("button", name="Retry failed")).to_be_hidden()
        # A task's events open in the conversation view.
        page.get_by_role("link", name="t1").click()
        expect(page.locator(".answer .text")).to_have_text(["p1"])
        # The list shows the batch; its output folder opens (here: the same batch).
        batch_url = page.url.rsplit("/", 1)[0]
        page.goto(f"{server.origin}/#/batches")
        expect(page.locator(".batches li a")).to_have_text([str(root / "out")])
        expect(page.locator(".batches li .muted")).to_have_text(
            [" finished · 3 of 3 finished: 3 ok, 0 failed"]
        )
        page.get_by_label("Output folder to open").fill(str(root / "out"))
        page.get_by_role("button", name="Open").click()
        expect(page).to_have_url(batch_url)
        expect(figure).to_have_text(["3 finished", "3 ok", "0 failed", "0 running", "0 pending"])
        # Its progress read again from the start: the retry's run after the first one.
        expect(page.locator("tr.task td.status")).to_have_text(["ok", "ok", "ok"])
        # A copy of the folder, with a task its run left unfinished, opens read-only with
        # every task listed (it has no progress of its own to replay), each task's events too.
        shutil.copytree(root / "out", root / "copy")
        (root / "copy" / "events" / "t4.jsonl.part").write_text(
            json.dumps({"type": "message_delta", "agent": "acp:scripted", "text": "half"}) + "\n"
        )
        page.goto(f"{server.origin}/#/batches")
        page.get_by_label("Output folder to open").fill(str(root / "copy"))
        page.get_by_role("button", name="Open").click()
        expect(page.locator(".session-status")).to_have_text("finished (read-only)")
        expect(page.locator("tr.task td a")).to_have_text(["t1", "t2", "t3", "t4"])
        assert texts(page, "tr.task td.status") == ["ok", "ok", "ok", "unfinished"]
        assert texts(page, "tr.task td.num") == ["1", "1", "1", ""]
        page.get_by_role("link", name="t4").click()
        expect(page.locator(".answer .text")).to_have_text(["half"])
        assert watched.problems == []


def test_an_unknown_batch_or_task_is_a_message_with_the_way_back(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    """Asked of the list first: no 404 reaches the console, and the page says what is missing."""
    root = tmp_path / "root"
    root.mkdir()
    with (
        live_server(str(root), str(tmp_path / "state")) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        for where in ("b_0123456789abcdef", "b_0123456789abcdef/t1", "nope"):
            page.goto(f"{server.origin}/#/batches/{where}")
            expect(page.locator(".flash")).to_have_text(
                f"No batch {where.split('/')[0]} on this server."
            )
            page.get_by_role("link", name="← Batches").click()
            expect(page.get_by_text("No batch yet.")).to_be_visible()
        assert watched.problems == []
