"""The web page driving the real ``gemini --acp`` 0.61.0 (scripted model, isolated home)
through ``gemwire serve`` started as a process, in chromium: the printed URL logs in, a
prompt streams its answer, a permission approved in the dialog writes the file, a turn is
cancelled mid-way, and a reload shows every event once."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from browser import watched_page
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


def test_the_page_drives_the_real_gemini(chromium_browser: Browser, tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("write_file", {"file_path": "hello.txt", "content": "hi\n"})]),
            Reply([Text("Done.")]),
            Reply([Text("Working on it"), Hang()]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
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
                base = match.group(1)
                with watched_page(chromium_browser, allowed=lambda u: u.startswith(base)) as w:
                    conversation(w.page, f"{base}/?token={match.group(2)}", base, env)
                    assert w.problems == []
                process.send_signal(signal.SIGTERM)
                assert process.wait(timeout=90) == 0
                assert env.live_processes() == []
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                process.stdout.close()


def conversation(page: Page, login: str, base: str, env: IsolatedGemini) -> None:
    page.goto(login)
    expect(page).to_have_url(f"{base}/")  # the token is gone from the address bar
    page.get_by_label("Agent").select_option("gemini")
    page.get_by_role("button", name="Start").click()
    expect(page.locator(".session-bar")).to_be_visible()
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
