"""The page's Sessions view in a real browser, on the real server app reading an isolated
home made of recorded sessions: the list (newest first, a page at a time, readable at 390 px,
filtered as `gemwire sessions list` filters), a hostile session opened in the one renderer
(its text shown as text, its Markdown drawn with nothing followed), its downloads, the
full-text search and its quotes (text too)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit.browser import watched_page
from kit.materialized import Materialized
from kit.web import live_server
from playwright.sync_api import Browser, expect

PAYLOAD = (
    '</pre></div><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<a href="javascript:window.__pwned=3">x</a><style>body{display:none}</style>'
    "<iframe src=http://127.0.0.1:9/></iframe>&amp;\u202egnp.exe"
)
MARKDOWN = (
    "[click me](javascript:window.__pwned=4) ![pic](http://127.0.0.1:9/x.png) "
    '<javascript:window.__pwned=5> **bold <img src=x onerror="window.__pwned=6">**\n\n'
    "```html\n</code></pre><script>window.__pwned=7</script>\n```"
)
"""Markdown whose links, image and code would run or load something if drawn as HTML."""


def hostile(run: Materialized) -> None:
    """The payload put into every text of the run's session a person would see."""
    escaped = json.dumps(PAYLOAD)[1:-1]
    for path in run.session_files():
        text = path.read_text(encoding="utf-8")
        for seen in ("create notes.txt", "helo world", "Planning the file"):
            text = text.replace(seen, escaped)
        text = text.replace("Fixed.", escaped + json.dumps(MARKDOWN)[1:-1])
        path.write_text(text, encoding="utf-8")


def test_a_hostile_saved_session_lists_opens_and_downloads_as_text(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    hostile(run)
    database = run.home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True)
    database.write_text(PAYLOAD * 100)  # not a database: named, and why, above the list
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
        assert page.locator(".unread li").all_text_contents() == [
            f"{database}: file is not a database"
        ]
        links = page.locator("table.list td.summary a")
        hostile_link = links.filter(has_text="window.__pwned=1")
        expect(hostile_link.first).to_be_visible()
        hostile_link.first.click()
        expect(page.locator(".conversation .user").first).to_be_visible()
        users = page.evaluate(
            "[...document.querySelectorAll('.user .text')].map(e => e.textContent)"
        )
        assert PAYLOAD in users
        # The answer's Markdown is drawn: its links and image as text with their address,
        # its raw HTML and code as text; nothing is followed, loaded or run.
        answer = page.locator(".answer .text.md").filter(has_text="click me")
        expect(answer).to_have_count(1)
        assert answer.locator(".link").all_text_contents() == [
            "click me (javascript:window.__pwned=4)",
            "pic (http://127.0.0.1:9/x.png)",
        ]
        assert answer.locator(".url").all_text_contents()[2] == "javascript:window.__pwned=5"
        assert answer.locator("strong").all_text_contents() == [
            'bold <img src=x onerror="window.__pwned=6">'
        ]
        assert answer.locator("pre.code code").all_text_contents() == [
            "</code></pre><script>window.__pwned=7</script>"
        ]
        assert PAYLOAD in (answer.locator("p").first.text_content() or "")
        assert page.evaluate("window.__pwned") is None
        view = "#view :is(script, img, iframe, style, a[href^='javascript'], [onerror])"
        assert page.evaluate(f'document.querySelectorAll("{view}").length') == 0
        assert page.locator(".conversation a").count() == 0
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
        expect(page.locator(".unread li")).to_have_text([f"{database}: file is not a database"])
        assert watched.problems == []


def test_full_text_search_lists_quotes_as_text_and_opens_the_session(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
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


def copies(run: Materialized, count: int) -> list[str]:
    """``count`` more sessions in the run's home, each the recorded one with its own id and
    its own day (the n-th one n days after 2026-01-01); their ids, newest first. The newest
    one's first prompt is 5,000 characters with no space."""
    [path] = run.session_files()
    text = path.read_text(encoding="utf-8")
    old = json.loads(text.splitlines()[0])["sessionId"]
    made = []
    for n in range(count):
        new = str(uuid.UUID(int=n + 1))
        day = f"2026-{1 + n // 28:02d}-{1 + n % 28:02d}T"
        copy = text.replace(old, new).replace("2026-11-22T", day)
        if n == count - 1:
            copy = copy.replace("create notes.txt", "y" * 5000)
        (run.chats / f"session-{day}00-00-{new[:8]}.jsonl").write_text(copy, encoding="utf-8")
        made.append(new)
    return made[::-1]


def test_the_list_is_newest_first_a_page_at_a_time_and_reads_at_390_px(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    recorded = json.loads(run.session_files()[0].read_text().splitlines()[0])["sessionId"]
    made = copies(run, 120)
    # The recorded session (2026-11-22) is the newest; then the copies, latest day first.
    newest = [recorded, *made]
    with (
        live_server(
            str(run.workspace), str(tmp_path / "state"), sessions_home=str(run.home)
        ) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        server.log_in(page)
        page.goto(f"{server.origin}/#/sessions")
        links = page.locator("table.list td.summary a")
        expect(links).to_have_count(50)

        def ids() -> list[str]:
            found: list[str] = page.evaluate(
                "[...document.querySelectorAll('table.list td.summary a')]"
                ".map(a => decodeURIComponent(a.getAttribute('href').split('/').pop()))"
            )
            return found

        assert ids() == newest[:50]
        expect(page.locator(".pager .muted")).to_have_text("1\u201350 of 121")
        # The page asks for one page, not the whole listing.
        listing = [url for url in asked if "/v1/saved-sessions?" in url]
        assert listing
        assert all("limit=50" in url for url in listing), listing
        expect(page.get_by_role("button", name="← Newer")).to_be_disabled()
        page.get_by_role("button", name="Older →").click()
        expect(page.locator(".pager .muted")).to_have_text("51\u2013100 of 121")
        assert ids() == newest[50:100]
        page.get_by_role("button", name="Older →").click()
        expect(page.locator(".pager .muted")).to_have_text("101\u2013121 of 121")
        assert ids() == newest[100:]
        expect(page.get_by_role("button", name="Older →")).to_be_disabled()
        page.get_by_role("button", name="← Newer").click()
        expect(page.locator(".pager .muted")).to_have_text("51\u2013100 of 121")
        # At 390 px: the hidden columns' headers go with them; the 5,000-character summary
        # is two lines at most and leaves the small cells their width.
        page.get_by_role("button", name="← Newer").click()
        expect(page.locator(".pager .muted")).to_have_text("1\u201350 of 121")
        page.set_viewport_size({"width": 390, "height": 844})
        headers = page.evaluate(
            "[...document.querySelectorAll('table.list th')]"
            ".filter(th => th.offsetParent !== null).map(th => th.textContent)"
        )
        assert headers == ["Updated", "Session", "Messages"]
        long = page.locator("table.list tbody tr").nth(1)
        assert "y" * 100 in (long.locator("td.summary").text_content() or "")
        when = long.locator("td.when").bounding_box()
        summary = long.locator("td.summary a").bounding_box()
        line = page.locator("table.list tbody tr").first.locator("td.summary a").bounding_box()
        assert when is not None
        assert summary is not None
        assert line is not None
        assert when["width"] > 100  # "2026-05-10 15:34" on one line
        assert summary["height"] <= 2 * line["height"] + 1
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert watched.problems == []


def test_the_filters_are_the_cli_s_labelled_with_the_server_s_choices(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    with (
        live_server(
            str(run.workspace), str(tmp_path / "state"), sessions_home=str(run.home)
        ) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        page.goto(f"{server.origin}/#/sessions")
        expect(page.locator("table.list tbody tr")).to_have_count(1)
        labels = page.locator(".filters label .label")
        expect(labels).to_have_text(["Agent", "Project", "Since", "Until", "Search"])
        assert all(label.is_visible() for label in labels.all())
        # Every agent the server reads sessions of (codex and opencode too), from the API.
        expect(page.get_by_label("Agent").locator("option")).to_have_text(
            ["all agents", "Gemini", "Claude Code", "Codex", "Qwen Code", "OpenCode", "Antigravity"]
        )
        # The projects the sessions are in, to choose from (the CLI's exact root).
        expect(page.get_by_label("Project").locator("option")).to_have_text(
            ["every project", str(run.workspace)]
        )
        page.get_by_label("Agent").select_option("codex")
        page.get_by_role("button", name="Filter").click()
        expect(page.get_by_text("No saved session matches.")).to_be_visible()
        page.get_by_label("Agent").select_option("gemini")
        page.get_by_label("Project").select_option(str(run.workspace))
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("table.list tbody tr")).to_have_count(1)
        # A range that ends before it starts is said, and nothing is asked.
        page.get_by_label("Since").fill("2026-11-22")
        page.get_by_label("Until").fill("2026-11-21")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator(".flash")).to_have_text(
            "“Since” (2026-11-22) is after “Until” (2026-11-21): no session can match."
        )
        expect(page.locator("table.list")).to_have_count(0)
        page.get_by_label("Until").fill("2026-11-22")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator("table.list tbody tr")).to_have_count(1)
        expect(page.locator(".flash")).to_be_hidden()
        # A saved session's heading is its summary (or first prompt), not its id.
        link = page.locator("table.list td.summary a")
        label = link.text_content()
        link.click()
        expect(page.locator(".session-title")).to_have_text(label or "")
        # An unknown saved session is a message with the way back, no 404 in the console.
        page.goto(f"{server.origin}/#/sessions/gemini/no-such-session")
        expect(page.locator(".flash")).to_have_text("No saved gemini session no-such-session.")
        page.get_by_role("link", name="← Sessions").click()
        expect(page.locator("table.list tbody tr")).to_have_count(1)
        assert watched.problems == []
