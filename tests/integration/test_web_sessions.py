"""The page's Sessions view in a real browser, on the real server app reading an isolated
home made of recorded sessions: the list, a hostile session opened in the one renderer (its
text shown as text), its downloads, the full-text search and its quotes (text too)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from browser import watched_page
from materialized import Materialized, materialize  # noqa: F401  (the fixture)
from playwright.sync_api import Browser, expect
from web_kit import live_server

PAYLOAD = (
    '</pre></div><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<a href="javascript:window.__pwned=3">x</a><style>body{display:none}</style>'
    "<iframe src=http://127.0.0.1:9/></iframe>&amp;\u202egnp.exe"
)


def hostile(run: Materialized) -> None:
    """The payload put into every text of the run's session a person would see."""
    escaped = json.dumps(PAYLOAD)[1:-1]
    for path in run.session_files():
        text = path.read_text(encoding="utf-8")
        for seen in ("create notes.txt", "helo world", "Planning the file", "Fixed."):
            text = text.replace(seen, escaped)
        path.write_text(text, encoding="utf-8")


def test_a_hostile_saved_session_lists_opens_and_downloads_as_text(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],  # noqa: F811
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    hostile(run)
    state = str(tmp_path / "state")
    with (
        live_server(str(run.workspace), state, sessions_home=str(run.home)) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        page.goto(f"{server.origin}/#/sessions")
        rows = page.locator("table.list tbody tr")
        expect(rows.first).to_be_visible()
        listed = page.evaluate("fetch('/v1/saved-sessions').then(r => r.json())")["sessions"]
        assert rows.count() == len(listed) >= 1
        links = page.locator("table.list td.summary a")
        hostile_link = links.filter(has_text="window.__pwned=1")
        expect(hostile_link.first).to_be_visible()
        hostile_link.first.click()
        expect(page.locator(".conversation .user").first).to_be_visible()
        users = page.evaluate(
            "[...document.querySelectorAll('.user .text')].map(e => e.textContent)"
        )
        assert PAYLOAD in users
        assert page.evaluate("window.__pwned") is None
        view = "#view :is(script, img, iframe, style, a[href^='javascript'], [onerror])"
        assert page.evaluate(f'document.querySelectorAll("{view}").length') == 0
        session_id = re.fullmatch(r".*#/sessions/gemini/(.+)", page.url)
        assert session_id is not None
        downloads = page.evaluate(
            "[...document.querySelectorAll('a[download]')].map(a => a.getAttribute('href'))"
        )
        base = f"/v1/saved-sessions/gemini/{session_id[1]}"
        assert downloads == [f"{base}?format=html", f"{base}?format=markdown"]
        markdown = page.evaluate(
            "(u) => fetch(u).then(async r => [r.headers.get('content-type'), await r.text()])",
            downloads[1],
        )
        assert markdown[0] == "text/markdown; charset=utf-8"
        assert "window.__pwned=1" in markdown[1]
        # Filtering by a text the session does not hold lists nothing.
        page.goto(f"{server.origin}/#/sessions")
        page.get_by_label("Search").fill("no such text anywhere")
        page.get_by_role("button", name="Filter").click()
        expect(page.get_by_text("No saved session matches.")).to_be_visible()
        assert watched.problems == []


def test_full_text_search_lists_quotes_as_text_and_opens_the_session(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],  # noqa: F811
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    hostile(run)
    state = str(tmp_path / "state")
    with (
        live_server(str(run.workspace), state, sessions_home=str(run.home)) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        server.log_in(page)
        page.goto(f"{server.origin}/#/sessions")
        expect(page.locator("table.list tbody tr").first).to_be_visible()

        def search(text: str) -> list[dict[str, Any]]:
            page.get_by_label("Search").fill(text)
            page.get_by_role("button", name="Filter").click()
            expect(page.locator("ol.search-hits > li").first).to_be_visible()
            found = page.evaluate(
                "(t) => fetch('/v1/saved-sessions/search?text=' + encodeURIComponent(t))"
                ".then(r => r.json())",
                text,
            )
            assert found["more"] is False
            hits: list[dict[str, Any]] = found["hits"]
            shown = page.evaluate(
                "[...document.querySelectorAll('ol.search-hits > li')].map(li => ["
                "li.querySelector('.hit-head a').textContent, "
                "[...li.querySelectorAll('.quote')].map(q => ["
                "q.querySelector('.field').textContent, "
                "q.querySelector('.quote-text').textContent])])"
            )
            assert shown == [
                [hit["title"], [[q["field"], q["text"]] for q in hit["quotes"]]] for hit in hits
            ]
            return hits

        # "replacements" is only in what the replace tool answered.
        [hit] = search("replacements")
        assert {q["field"] for q in hit["quotes"]} == {"tool output"}
        assert "(1 replacements)" in hit["quotes"][0]["text"]
        # The hostile text in a tool's output is quoted as text: no element, no request.
        [hostile_hit] = search("onerror")
        assert any('<img src=x onerror="window.__pwned=2">' in q["text"]
                   for q in hostile_hit["quotes"])  # fmt: skip
        view = "#view :is(script, img, iframe, style, a[href^='javascript'], [onerror])"
        assert page.evaluate(f'document.querySelectorAll("{view}").length') == 0
        assert page.evaluate("window.__pwned") is None
        page.locator("ol.search-hits .hit-head a").first.click()
        expect(page.locator(".conversation .user").first).to_be_visible()
        assert page.url.endswith(f"#/sessions/gemini/{hit['id']}")
        outputs = page.evaluate(
            "[...document.querySelectorAll('.conversation')].map(e => e.textContent).join()"
        )
        assert "(1 replacements)" in outputs
        assert [url for url in asked if not url.startswith(server.origin + "/")] == []
        assert [url for url in asked if url.rstrip("/").endswith("/x")] == []
        assert watched.problems == []
