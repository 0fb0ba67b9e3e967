"""The page's tables on a phone (390 px wide) in a real browser: a header or a number is
never broken across lines (it was "Requ/ests", "3,2/00"); a table too wide scrolls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kit.browser import watched_page
from kit.materialized import Materialized
from kit.web import live_server
from playwright.sync_api import Browser, expect

BROKEN = """(selector) => [...document.querySelectorAll(selector)]
    .filter((cell) => cell.textContent.trim())
    .filter((cell) => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
    })
    .map((cell) => cell.textContent)"""


def test_usage_and_sessions_tables_keep_headers_and_numbers_whole_at_390_px(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
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
        page.set_viewport_size({"width": 390, "height": 844})
        server.log_in(page)
        for view, table in (("#/usage", "table.usage"), ("#/sessions", "table.sessions")):
            page.goto(f"{server.origin}/{view}")
            expect(page.locator(f"{table} tbody tr").first).to_be_visible()
            broken = page.evaluate(BROKEN, f"{table} th, {table} td.num")
            assert broken == [], view
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, view  # the page itself never scrolls sideways
