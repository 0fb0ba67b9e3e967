"""The web page driving the real ``gemini --acp`` 0.61.0 (scripted model, isolated home)
through ``gemwire serve`` started as a process, in chromium: the printed URL logs in, a
prompt streams its answer, a permission approved in the dialog writes the file, a turn is
cancelled mid-way, and a reload shows every event once, then the conversation goes on. And a
saved session with a tool call, continued from the Sessions view: its history as the saved
session holds it (a tool card with its diff), Gemini's lossy replay of it collapsed, the next
turn after it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from kit.browser import watched_page
from playwright.sync_api import Browser, Page, expect

from gemwire.testing import FunctionCall, Hang, IsolatedGemini, Reply, Scenario, ScriptedModel, Text

pytestmark = pytest.mark.e2e

TOKEN = "e2e-web-token-0123456789"
URL = re.compile(r"^gemwire serve: (http://127\.0\.0\.1:\d+)/\?token=(\S+)\n$")
DONE = re.compile(r"^Done · end_turn( · [\d.]+ m?s)?$")
CANCELLED = re.compile(r"^Stopped · cancelled( · [\d.]+ m?s)?$")


def shown(page: Page) -> list[str]:
    """Each thing in the conversation as text, without a live call's clock time."""
    found: list[str] = page.evaluate(
        """[...document.querySelectorAll('.stream > *')].map(e => {
            const copy = e.cloneNode(true);
            copy.querySelectorAll('.time').forEach(t => t.remove());
            return copy.textContent;
        })"""
    )
    return found


@contextmanager
def serving(env: IsolatedGemini, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``gemwire serve`` as a process in ``env``: its origin and the login URL it printed;
    stopped with SIGTERM at the end, every agent with it."""
    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "gemwire", "serve", "--port", "0",
                "--root", str(env.workspace), "--state-dir", str(tmp_path / "state"),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env.environ({"GEMWIRE_TOKEN": TOKEN}),
            cwd=env.workspace,
        )  # fmt: skip
        assert process.stdout is not None
        try:
            match = URL.match(process.stdout.readline())
            assert match is not None
            yield match.group(1), f"{match.group(1)}/?token={match.group(2)}"
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=90) == 0
            assert env.live_processes() == []
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()


def test_the_page_drives_the_real_gemini(chromium_browser: Browser, tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("write_file", {"file_path": "hello.txt", "content": "hi\n"})]),
            Reply([Text("Done.")]),
            Reply([Text("Working on it"), Hang()]),
            Reply([Text("Still here.")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        with (
            serving(env, tmp_path) as (base, login),
            watched_page(chromium_browser, allowed=lambda u: u.startswith(base)) as w,
        ):
            conversation(w.page, login, base, env)
            assert w.problems == []


def conversation(page: Page, login: str, base: str, env: IsolatedGemini) -> None:
    page.goto(login)
    expect(page).to_have_url(f"{base}/")  # the token is gone from the address bar
    page.get_by_label("Agent").select_option("gemini")
    page.get_by_role("button", name="Start").click()
    # Shown once Gemini CLI has started: as long as that takes (the suite's load with it).
    expect(page.locator(".session-bar")).to_be_visible(timeout=60_000)
    page.get_by_label("Message").fill("write hello.txt")
    page.get_by_label("Message").press("Enter")
    dialog = page.locator("dialog.permission-dialog")
    expect(dialog).to_be_visible(timeout=60_000)
    offered = page.evaluate(
        "[...document.querySelectorAll('dialog .option')].map(b => b.dataset.optionId)"
    )
    assert "proceed_once" in offered
    dialog.locator("[data-option-id='proceed_once']").click()
    expect(page.locator(".turn")).to_have_text(DONE, timeout=60_000)
    assert page.locator(".answer .text").last.text_content() == "Done."
    assert (env.workspace / "hello.txt").read_text() == "hi\n"
    expect(page.locator(".files .path")).to_have_text(["hello.txt"])
    expect(page.locator(".card .status")).to_have_text(["completed"])
    expect(page.locator(".card pre.diff .line.add")).to_have_text(["+hi"])
    # Cancel mid-turn.
    page.get_by_label("Message").fill("work")
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".answer .text").last).to_have_text("Working on it", timeout=60_000)
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator(".turn").nth(1)).to_have_text(CANCELLED, timeout=60_000)
    # Reload: the conversation read again from the log, each event once.
    before = shown(page)
    page.reload()
    expect(page.locator(".turn")).to_have_count(2)
    assert shown(page) == before
    # ... and the conversation goes on from the reloaded page.
    page.get_by_label("Message").fill("still there?")
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".turn").nth(2)).to_have_text(DONE, timeout=60_000)
    assert page.locator(".answer .text").last.text_content() == "Still here."
    assert texts(page, ".user .text")[-1] == "still there?"


def texts(page: Page, selector: str) -> list[str]:
    found: list[str] = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(e => e.textContent)", selector
    )
    return found


def test_a_saved_session_with_a_tool_call_continues_with_its_own_history(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("write_file", {"file_path": "notes.txt", "content": "one\n"})]),
            Reply([Text("Wrote **notes.txt**.")]),
            Reply([Text("Still here.")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        with (
            serving(env, tmp_path) as (base, login),
            watched_page(chromium_browser, allowed=lambda u: u.startswith(base)) as w,
        ):
            page = w.page
            page.goto(login)
            # A session of the real Gemini CLI that writes a file (edits allowed), closed.
            page.get_by_label("Agent").select_option("gemini")
            page.get_by_label("Permissions").select_option("edits")
            page.get_by_role("button", name="Start").click()
            page.get_by_label("Message").fill("write notes.txt")
            page.get_by_label("Message").press("Enter")
            expect(page.locator(".turn")).to_have_text(DONE, timeout=60_000)
            sid = page.url.rsplit("/", 1)[1]
            view = page.evaluate(f"fetch('/v1/sessions/{sid}').then(r => r.json())")
            saved_id = view["agent_session_id"]
            closed = page.evaluate(
                f"fetch('/v1/sessions/{sid}', {{method: 'DELETE'}}).then(r => r.status)"
            )
            assert closed == 200
            # Gemini CLI 0.61.0 names the file a load creates after the current minute and the
            # session id: within the session's first minute that is the session's own file,
            # which the load resets (test_acp_gemini.py). Make the session an older one.
            (saved_file,) = [p for p in env.session_files() if saved_id[:8] in p.name]
            saved_file.rename(
                saved_file.with_name(f"session-2020-01-01T00-00-{saved_id[:8]}.jsonl")
            )
            # The Sessions view lists the session Gemini saved; its page shows the call.
            page.goto(f"{base}/#/sessions")
            page.locator("table.list td.summary a").first.click()
            expect(page.locator(".card .title")).to_have_count(1)
            saved = texts(page, ".stream > *")
            title = page.locator(".session-title").text_content()
            page.get_by_role("button", name="Continue").click()
            expect(page.locator(".composer")).to_be_visible(timeout=60_000)
            # The history is the saved session's own: the write as a card with its diff, the
            # prompt as it was typed, the answer drawn as Markdown; not Gemini's replay, whose
            # <session_context> preamble and "[Function Call: ...]" lines stay collapsed.
            history = page.locator("section.history .history-events > *")
            expect(history).to_have_count(len(saved), timeout=60_000)
            assert texts(page, "section.history .history-events > *") == saved
            expect(page.locator("section.history .card pre.diff .line.add")).to_have_text(["+one"])
            expect(page.locator("section.history .answer strong")).to_have_text(["notes.txt"])
            replay = page.locator("details.replay")
            expect(replay).to_have_count(1)
            assert replay.evaluate("(d) => d.open") is False
            assert "<session_context>" in (replay.text_content() or "")
            outside = texts(page, ".stream > .user .text, section.history .user .text")
            assert outside == ["write notes.txt"]
            expect(page.locator(".session-title")).to_have_text(title or "")
            assert "<session_context>" not in (title or "")
            # The next turn, after the history; the saved session now holds it too: a reload
            # shows it once, after the same history.
            page.get_by_label("Message").fill("and now?")
            page.get_by_label("Message").press("Enter")
            expect(page.locator(".stream > .answer .text")).to_have_text(
                ["Still here."], timeout=60_000
            )
            expect(page.locator(".stream > .turn")).to_have_text(DONE, timeout=60_000)
            before = shown(page)
            page.reload()
            expect(page.locator(".stream > .turn")).to_have_text(DONE, timeout=60_000)
            expect(history).to_have_count(len(saved), timeout=60_000)
            assert shown(page) == before
            assert texts(page, ".stream > .user .text") == ["and now?"]
            assert w.problems == []
        assert model.turns_left == 0
