"""The page's Usage view in a real browser, on the real server app reading an isolated home
made of recorded sessions: the chart of cost per day, the table, the filters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from browser import watched_page
from materialized import Materialized, materialize  # noqa: F401  (the fixture)
from playwright.sync_api import Browser, expect
from web_kit import live_server


def test_usage_shows_the_cost_per_day_as_a_chart_and_a_table(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],  # noqa: F811
    tmp_path: Path,
) -> None:
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
        expect(page.locator("svg.chart")).to_be_visible()
        report = page.evaluate("fetch('/v1/usage?by=day').then(r => r.json())")
        keys = [row["key"] for row in report["rows"]]
        assert keys
        bars = page.evaluate(
            "[...document.querySelectorAll('svg.chart rect.bar')].map(r => r.dataset.key)"
        )
        assert bars == keys
        cells = page.evaluate(
            "[...document.querySelectorAll('table.usage tbody tr td:first-child')]"
            ".map(td => td.textContent)"
        )
        assert cells == keys
        expect(page.locator(".report .badge.cost")).to_contain_text("(estimate)")
        # Per model: the same filters as `gemwire usage --by model`.
        page.get_by_label("Group by").select_option("model")
        page.get_by_role("button", name="Show").click()
        models = page.evaluate("fetch('/v1/usage?by=model').then(r => r.json())")["rows"]
        expect(page.locator("table.usage tbody tr")).to_have_count(len(models))
        first = page.locator("table.usage tbody tr td").first
        expect(first).to_have_text(models[0]["key"])
        assert watched.problems == []
