"""``gemwire eval report --format html``: the page in a real headless browser (Playwright
driving Debian's chromium; ``make test`` installs both): the agents' figures and the
task-by-agent matrix as a reader sees them, no script, no request leaving the files, and each
attempt's link opening its transcript."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from kit.browser import watched_page
from playwright.sync_api import Browser

from gemwire.batch.eval_page import wilson
from gemwire.batch.results import Grade, ReportedCost, TaskResult
from gemwire.cli import main
from gemwire.events import TokenUsage

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "acp"


def _grade(reward: float | None, status: str) -> Grade:
    return Grade(status=status, reward=reward, exit_code=0, output="", duration_s=0.1)  # type: ignore[arg-type]


def _attempt(task_id: str, grade: Grade, **fields: object) -> TaskResult:
    base: dict[str, object] = {
        "ok": True,
        "error": None,
        "answer": "",
        "files_changed": [],
        "usage": TokenUsage(input_tokens=90, output_tokens=10, total_tokens=100),
        "duration_s": 2.0,
        "attempts": 1,
        "session_id": "s",
        "resume": None,
        "workspace": "/w",
        "agent": task_id.split(".")[1],
    }
    return TaskResult(task_id=task_id, grade=grade, **{**base, **fields})  # type: ignore[arg-type]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An eval of two tasks by gemini and qwen, two attempts each; gemini's events are Gemini
    CLI's recorded answer, qwen's Qwen Code's recorded shell call."""
    out = tmp_path / "out"
    (out / "events").mkdir(parents=True)
    passed, failed = _grade(1.0, "passed"), _grade(0.0, "failed")
    results = [
        _attempt("add.gemini.1", passed),
        _attempt("add.gemini.2", failed),
        _attempt("xxx.gemini.1", _grade(None, "crashed")),
        _attempt("xxx.gemini.2", passed),
        _attempt("add.qwen.1", passed, agent_cost=ReportedCost(amount=0.5, currency="USD")),
        _attempt("add.qwen.2", passed),
        _attempt("xxx.qwen.1", failed),
        _attempt("xxx.qwen.2", passed),
    ]
    for result in results:
        recorded = "gemini/answer.jsonl" if result.agent == "gemini" else "qwen/shell.jsonl"
        (out / "events" / f"{result.task_id}.jsonl").write_bytes((GOLDEN / recorded).read_bytes())
    (out / "results.jsonl").write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in results))
    return out


def test_the_page_shows_the_comparison_and_links_each_attempt_to_its_transcript(
    chromium_browser: Browser, out: Path, tmp_path: Path
) -> None:
    page_file = tmp_path / "site" / "report.html"
    ran = CliRunner().invoke(
        main, ["eval", "report", str(out), "--format", "html", "-o", str(page_file)]
    )
    assert ran.exit_code == 0, ran.output
    assert ran.stdout == f"{page_file}, and 8 transcripts in report-attempts/\n"
    site = page_file.parent.resolve()
    url = page_file.resolve().as_uri()
    with watched_page(
        chromium_browser, allowed=lambda requested: requested.startswith(site.as_uri() + "/")
    ) as watched:
        page = watched.page
        page.goto(url)
        assert page.locator("script").count() == 0
        rows = page.locator("#agents tr").all_inner_texts()
        assert [row.split("\t") for row in rows] == [
            ["agent", "attempts", "pass rate (95 % CI)", "pass@1", "pass@2", "reward", "errors",
             "tokens", "cost", "agent's cost", "time", "time per attempt"],
            ["gemini", "3/4", "67% (21% to 94%)", "75%", "100%", "0.67", "verify_crashed 1",
             "400", "-", "-", "8.0 s", "2.0 s"],
            ["qwen", "4", "75% (30% to 95%)", "75%", "100%", "0.75", "-", "400", "-",
             "$0.5000", "8.0 s", "2.0 s"],
        ]  # fmt: skip
        tasks = page.locator("#tasks tr").all_inner_texts()
        assert [row.split("\t") for row in tasks] == [
            ["task", "gemini (passed/graded)", "qwen (passed/graded)"],
            ["add", "1/2 12", "2/2 12"],  # each attempt's number a badge of its own
            ["xxx", "1/1 12", "1/2 12"],
        ]
        badge = page.locator('#tasks a[href="report-attempts/xxx.gemini.1.html"]')
        assert badge.get_attribute("class") == "a error"
        assert badge.get_attribute("title") == "attempt 1: verifier crashed, 2.0 s"
        page.locator('#tasks a[href="report-attempts/add.qwen.1.html"]').click()
        page.wait_for_url(site.as_uri() + "/report-attempts/add.qwen.1.html")
        assert page.locator("script").count() == 0
        assert "go" in page.locator("main").inner_text()  # Qwen's recorded prompt
    assert watched.problems == []


def test_html_needs_a_file_and_a_file_needs_html(out: Path, tmp_path: Path) -> None:
    for args in (["--format", "html"], ["-o", str(tmp_path / "r.html")]):
        ran = CliRunner().invoke(main, ["eval", "report", str(out), *args])
        assert ran.exit_code == 2
        assert "--format html writes a page: give it -o FILE" in ran.stderr


@pytest.mark.parametrize(
    ("passed", "graded", "interval"),
    [(0, 0, None), (2, 3, (0.2077, 0.9385)), (10, 10, (0.7225, 1.0)), (0, 10, (0.0, 0.2775))],
)
def test_the_wilson_interval_has_its_known_values(
    passed: int, graded: int, interval: tuple[float, float] | None
) -> None:
    got = wilson(passed, graded)
    assert got == interval if interval is None else got == pytest.approx(interval, abs=1e-4)
