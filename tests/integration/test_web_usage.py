"""The page's Usage view in a real browser, on the real server app reading an isolated home
made of recorded sessions: the chart of cost per day, the table, the filters of
`gemwire usage` (every grouping, the agents and projects the sessions have, labelled dates,
a range that ends before it starts), and a home whose model has no price."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kit.browser import watched_page
from kit.materialized import Materialized
from kit.web import live_server
from playwright.sync_api import Browser, Page, expect

RECORDED_MODEL = "gemini-3.8-flash"
"""The scripted model's name in the recordings: the price table does not know it."""


def texts(page: Page, selector: str) -> list[str]:
    found: list[str] = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(e => e.textContent)", selector
    )
    return found


def priced(run: Materialized) -> None:
    """The recorded session, its model renamed to one the price table knows."""
    for path in run.session_files():
        path.write_text(path.read_text().replace(RECORDED_MODEL, "gemini-2.5-flash"))


def test_usage_shows_the_cost_per_day_as_a_chart_and_a_table(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "plain_answer")
    priced(run)
    with (
        live_server(
            str(run.workspace), str(tmp_path / "state"), sessions_home=str(run.home)
        ) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        page.goto(f"{server.origin}/#/usage")
        expect(page.locator("svg.chart")).to_be_visible()
        report = page.evaluate("fetch('/v1/usage?by=day').then(r => r.json())")
        keys = [row["key"] for row in report["rows"]]
        assert keys
        assert all(row["cost_usd"] > 0 for row in report["rows"])
        bars = page.evaluate(
            "[...document.querySelectorAll('svg.chart rect.bar')].map(r => r.dataset.key)"
        )
        assert bars == keys
        cells = texts(page, "table.usage tbody tr td:first-child")
        assert cells == keys
        expect(page.locator(".report .badge.cost")).to_contain_text("(estimate)")
        # The filters are labelled on the page; the choices are those of `gemwire usage`.
        assert texts(page, ".filters label .label") == [
            "Group by", "Agent", "Project", "Since", "Until"
        ]  # fmt: skip
        assert texts(page, "select[name=by] option") == [
            "per day", "per week", "per month", "per model", "per project", "per session"
        ]  # fmt: skip
        # Agents and projects come from the server: every agent it reads, every project.
        expect(page.locator("select[name=agent] option")).to_have_count(7)
        assert texts(page, "select[name=agent] option") == [
            "all agents", "Gemini", "Claude Code", "Codex", "Qwen Code", "OpenCode", "Antigravity"
        ]  # fmt: skip
        assert texts(page, "select[name=project] option") == ["every project", str(run.workspace)]
        for by in ("week", "month", "session", "model"):
            page.get_by_label("Group by").select_option(by)
            page.get_by_role("button", name="Show").click()
            rows = page.evaluate("(by) => fetch('/v1/usage?by=' + by).then(r => r.json())", by)[
                "rows"
            ]
            expect(page.locator("table.usage tbody tr td:first-child")).to_have_text(
                [row["key"] for row in rows]
            )
        # One project, as the select offers it (its root folder, as the CLI takes it).
        page.get_by_label("Project").select_option(str(run.workspace))
        page.get_by_role("button", name="Show").click()
        expect(page.locator("table.usage tbody tr")).to_have_count(len(rows))
        # A range that ends before it starts is said, not shown as an empty report.
        page.get_by_label("Since").fill("2026-11-02")
        page.get_by_label("Until").fill("2026-11-01")
        page.get_by_role("button", name="Show").click()
        expect(page.locator(".flash")).to_have_text(
            "“Since” (2026-11-02) is after “Until” (2026-11-01): no session can match."
        )
        expect(page.locator("table.usage")).to_have_count(0)
        assert watched.problems == []


def test_a_home_whose_model_has_no_price_says_so_instead_of_an_empty_chart(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
    tmp_path: Path,
) -> None:
    """The offline try (`examples/done.json`, the scripted model): tokens, no price."""
    run = materialize("0.61.0", "plain_answer")
    with (
        live_server(
            str(run.workspace), str(tmp_path / "state"), sessions_home=str(run.home)
        ) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        page.goto(f"{server.origin}/#/usage")
        expect(page.locator(".no-priced")).to_have_text(
            "No priced usage in this range: the tokens are counted below, the cost is not known."
        )
        assert page.locator("svg.chart").count() == 0
        report = page.evaluate("fetch('/v1/usage').then(r => r.json())")
        total = report["total"]
        assert total["cost_usd"] is None
        tokens = total["input_tokens"] + total["output_tokens"]
        expect(page.locator(".report .badge.tokens")).to_have_text(f"{tokens:,} tokens")
        expect(page.locator(".report table.usage tbody tr")).to_have_count(len(report["rows"]))
        assert watched.problems == []
