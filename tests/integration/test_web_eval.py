"""The page's Batches view of an eval in a real browser (Playwright driving Debian's chromium),
as ``eval report --format html`` draws one: each agent's pass rate with its interval, pass@k,
reward, errors, tokens, cost and time; the task-by-agent matrix, each attempt's badge opening
its events and its verdict in the batch's task view. The eval is recorded
(tests/fixtures/eval/web: Gemini CLI and Qwen Code on the scripted model); a second folder is
synthetic and hostile: a task id and a verifier's output that are markup and script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote

from kit.browser import watched_page
from kit.web import live_server
from playwright.sync_api import Browser, Page, expect

from gemwire.batch import read_results

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "web"
EVIL = "https://evil.example/x.png"
HOSTILE_TASK = f"<img src={EVIL} onerror=\"document.title='pwned'\">"
PROMPT = "pick.py has a bug. Fix it."  # examples/eval's largest
HOSTILE_OUTPUT = f"</pre><script>document.title='pwned'</script><img src={EVIL}>\n"


def rows(page: Page, selector: str) -> list[list[str]]:
    found: list[list[str]] = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(r => [...r.cells].map(c => c.textContent))",
        selector,
    )
    return found


def hostile_folder(folder: Path) -> None:
    """Synthetic: two attempts made from a recorded result, one with a verifier's output that
    is markup, one with a task id that is (gemwire's own tasks files refuse such an id) and a
    verifier that crashed."""
    folder.mkdir()
    shutil.copy(FIXTURE / "eval.json", folder / "eval.json")
    recorded = json.loads((FIXTURE / "results.jsonl").read_text().splitlines()[0])
    output = {**recorded, "task_id": "hostile.gemini.1"}
    output["grade"] = {**output["grade"], "output": HOSTILE_OUTPUT}
    named = {**recorded, "task_id": f"{HOSTILE_TASK}.gemini.1"}
    named["grade"] = {**named["grade"], "status": "crashed", "reward": None, "exit_code": None}
    (folder / "results.jsonl").write_text(json.dumps(output) + "\n" + json.dumps(named) + "\n")
    (folder / "events").mkdir()
    shutil.copy(
        FIXTURE / "events" / f"{recorded['task_id']}.jsonl",
        folder / "events" / "hostile.gemini.1.jsonl",
    )


def open_folder(page: Page, origin: str, folder: Path) -> None:
    page.goto(f"{origin}/#/batches")
    page.get_by_label("Output folder to open").fill(str(folder))
    page.get_by_role("button", name="Open").click()
    expect(page.locator(".session-status")).to_have_text("finished (read-only)")


def test_an_eval_shows_its_comparison_and_each_attempt_hostile_text_as_text(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(FIXTURE, root / "eval")
    hostile_folder(root / "hostile")
    took = {r.task_id: r.duration_s for r in read_results(FIXTURE)}
    seconds = {a: sum(s for i, s in took.items() if f".{a}." in i) for a in ("gemini", "qwen")}
    with (
        live_server(str(root), str(tmp_path / "state")) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        open_folder(page, server.origin, root / "eval")
        expect(page.locator("tr.eval-agent")).to_have_count(2)
        assert rows(page, ".eval-agents tr") == [
            ["Agent", "Attempts", "Pass rate (95 % CI)", "pass@1", "pass@2", "Reward", "Errors",
             "Tokens", "Cost", "Agent's cost", "Time", "Per attempt"],
            ["gemini", "4", "75% (30% to 95%)", "75%", "100%", "0.75", "-", "778", "-", "-",
             f"{seconds['gemini']:.1f} s", f"{seconds['gemini'] / 4:.1f} s"],
            ["qwen", "4", "100% (51% to 100%)", "100%", "100%", "1.00", "-", "0", "-", "-",
             f"{seconds['qwen']:.1f} s", f"{seconds['qwen'] / 4:.1f} s"],
        ]  # fmt: skip
        assert rows(page, ".eval-matrix tr") == [
            ["Task", "gemini (passed/graded)", "qwen (passed/graded)"],
            ["add", "2/2 12", "2/2 12"],  # each attempt's number a badge of its own
            ["largest", "1/2 12", "2/2 12"],
        ]
        batch = page.url.rsplit("/", 1)[1]
        missed = page.locator(f'a.attempt[href="#/batches/{batch}/largest.gemini.1"]')
        assert missed.get_attribute("class") == "attempt failed"
        assert (
            missed.get_attribute("title") == f"attempt 1: failed, {took['largest.gemini.1']:.1f} s"
        )
        # A badge opens the attempt: its verdict, and its events in the conversation view.
        missed.click()
        expect(page.locator(".verdict .facts span").first).to_have_text("failed")
        assert page.locator(".verdict .facts span").all_text_contents()[1:4] == [
            "gemini, attempt 1 of largest", "reward 0", "verifier failed"
        ]  # fmt: skip
        expect(page.locator(".verdict pre")).to_contain_text("FAILED (failures=1)")
        expect(page.locator(".user .text")).to_have_text([PROMPT])
        # The hostile folder: its task id and its verifier's output are text, nothing runs.
        open_folder(page, server.origin, root / "hostile")
        expect(page.locator(".eval-matrix tbody tr td:first-child")).to_have_text(
            [HOSTILE_TASK, "hostile"]
        )
        assert rows(page, ".eval-agents tr.eval-agent")[0][1:7] == [
            "1/2", "100% (21% to 100%)", "100%", "1.00", "verify_crashed 1", "444"
        ]  # fmt: skip
        named = page.locator(".eval-matrix tbody tr").first.locator("a.attempt")
        assert named.get_attribute("class") == "attempt error"
        assert (
            named.get_attribute("title")
            == f"attempt 1: verifier crashed, {took['add.gemini.1']:.1f} s"
        )
        # encodeURIComponent's: all but letters, digits and -_.!~*'()
        assert named.get_attribute("href") == f"#/batches/{page.url.rsplit('/', 1)[1]}/" + quote(
            f"{HOSTILE_TASK}.gemini.1", safe="-_.!~*'()"
        )
        page.get_by_role("link", name="hostile.gemini.1").click()
        expect(page.locator(".verdict pre")).to_have_text(HOSTILE_OUTPUT)
        assert page.locator("main img, main script").count() == 0
        assert page.title() == "gemwire"
    assert watched.problems == []
