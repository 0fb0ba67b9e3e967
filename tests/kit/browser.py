"""A page in a real headless browser, and what it did wrong.

The browser is conftest's ``chromium_browser`` (Playwright driving Debian's chromium).
A `Watched` page records what a page must not do: console errors, uncaught exceptions,
and requests to anything but what it may load.

    def test_page(chromium_browser):
        with watched_page(chromium_browser, allowed=lambda url: url == page_url) as page:
            page.page.goto(page_url)
            assert page.problems == []
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, Request


class Watched:
    """A page and what it did wrong so far."""

    def __init__(self, page: Page, allowed: Callable[[str], bool]) -> None:
        self.page = page
        self.problems: list[str] = []
        self._allowed = allowed
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"exception: {error}"))
        page.on("request", self._request)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "assert"):
            self.problems.append(f"console: {message.text}")

    def _request(self, request: Request) -> None:
        if not self._allowed(request.url):
            self.problems.append(f"request: {request.url}")


@contextmanager
def watched_page(browser: Browser, *, allowed: Callable[[str], bool]) -> Iterator[Watched]:
    """A fresh page (its own context: no cookies or storage shared with another test)."""
    context = browser.new_context()
    try:
        yield Watched(context.new_page(), allowed)
    finally:
        context.close()


@contextmanager
def file_page(browser: Browser, folder: Path) -> Iterator[Callable[[str, str], Watched]]:
    """``open(html, name)``: ``html`` written to ``folder/name`` and shown, on one page that may
    request nothing but the file it shows; the `Watched` problems are that file's alone.

    One page for many files: a fresh context per file cost a loop of 60 sessions 1.5 s each.
    """
    shown = [""]
    with watched_page(browser, allowed=lambda requested: requested == shown[0]) as page:

        def open_file(html: str, name: str) -> Watched:
            path = folder / name
            path.write_text(html, encoding="utf-8")
            shown[0] = path.resolve().as_uri()
            page.problems.clear()
            page.page.goto(shown[0])
            return page

        yield open_file
