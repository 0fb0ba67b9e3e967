"""The HTML export in a real headless browser (Playwright driving Debian's chromium):
every recorded session renders with no console error and no network request, and a
hostile session's text shows as text.

``make test`` installs both (`make browser`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit.browser import file_page
from kit.corpus import FIXTURES, RECORDINGS
from kit.opencode_db import build
from playwright.sync_api import Browser

from gemwire.events import ToolCallFinished
from gemwire.sessions import load_session as load_any, to_html
from gemwire.sessions.gemini import load_session

SESSIONS = sorted(
    p
    for p in RECORDINGS.glob("*/*/*/gemini-home/tmp/*/chats/session-*")
    if p.suffix in (".json", ".jsonl")
)
PAYLOAD = (
    '</pre></div><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<a href="javascript:window.__pwned=3">x</a><style>body{display:none}</style>'
    "<iframe src=http://127.0.0.1:9/></iframe>&amp;"
)


def _materialized(source: Path, target: Path) -> Path:
    """The session file with its placeholders made real paths (as a home would hold it)."""
    text = source.read_text(encoding="utf-8")
    for old, new in (("__WORKSPACE__", "/work/project"), ("__HOME__", "/home/user")):
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    return target


def test_every_recorded_session_renders_cleanly(chromium_browser: Browser, tmp_path: Path) -> None:
    assert len(SESSIONS) >= 60
    with file_page(chromium_browser, tmp_path) as open_file:
        for n, source in enumerate(SESSIONS):
            conversation = load_session(_materialized(source, tmp_path / source.name))
            page = open_file(to_html(conversation), f"{n}.html")
            assert page.page.evaluate("document.scripts.length") == 0
            assert page.page.evaluate("document.querySelector('h1').textContent") != ""
            # Every message and tool call of the session is on the page.
            cards = sum(1 for e in conversation.events() if e.type == "tool_call_started")
            assert page.page.evaluate("document.querySelectorAll('.card').length") >= cards
            assert page.problems == [], source


OTHER_AGENTS = sorted(
    p
    for folder in ("claude/0.16.2", "codex/0.16.0", "qwen/0.24.4", "opencode/1.18.33")
    for p in (FIXTURES / folder).glob("*")
    if p.suffix in (".jsonl", ".sql") and not p.name.endswith(".events.jsonl")
)


def test_every_other_agent_s_recorded_session_renders_cleanly(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    """The same renderer for Claude Code's, Codex's, Qwen Code's and OpenCode's sessions."""
    assert len(OTHER_AGENTS) == 37  # 9 cases of each agent, and OpenCode's task subagent
    with file_page(chromium_browser, tmp_path) as open_file:
        for n, source in enumerate(OTHER_AGENTS):
            target = tmp_path / f"{n}-{source.name}"
            if source.suffix == ".sql":
                session = build(source.read_text(), target.with_suffix(".db"))
            else:
                session = _materialized(source, target)
            conversation = load_any(session)
            page = open_file(to_html(conversation), f"{n}.html")
            assert page.page.evaluate("document.scripts.length") == 0
            cards = sum(1 for e in conversation.events() if e.type == "tool_call_started")
            assert page.page.evaluate("document.querySelectorAll('.card').length") == cards
            assert page.problems == [], source


def test_subagent_work_renders_inside_the_call_that_ran_it(
    chromium_browser: Browser, materialize: Any, tmp_path: Path
) -> None:
    run = materialize("0.61.0", "session_subagent", "json")
    html = to_html(load_session(run.session_files()[0]))
    with file_page(chromium_browser, tmp_path) as open_file:
        page = open_file(html, "subagent.html")
        nested = page.page.evaluate(
            "[...document.querySelectorAll('.card .subagent .card .name')].map(e => e.textContent)"
        )
        assert nested == ["read_file", "complete_task"]
        outer = page.page.evaluate("document.querySelector('.card .name').textContent")
        assert outer == "invoke_agent"
        assert page.problems == []


def test_large_tool_output_renders(
    chromium_browser: Browser, materialize: Any, tmp_path: Path
) -> None:
    run = materialize("0.61.0", "large_tool_output")
    conversation = load_session(run.session_files()[0])
    longest = max(
        len(e.output or "") for e in conversation.events() if isinstance(e, ToolCallFinished)
    )
    assert longest > 100_000
    with file_page(chromium_browser, tmp_path) as open_file:
        page = open_file(to_html(conversation), "large.html")
        shown = page.page.evaluate(
            "Math.max(...[...document.querySelectorAll('pre')].map(p => p.textContent.length))"
        )
        assert shown >= longest
        assert page.problems == []


def _hostile(source: Path, target: Path) -> Path:
    """A recorded session with the payload put into every text a person would see."""
    escaped = json.dumps(PAYLOAD)[1:-1]
    text = source.read_text(encoding="utf-8")
    for seen in (
        "create notes.txt",
        "helo world",
        "Planning the file",
        "gemini-3.8-flash",
        "Fixed.",
    ):
        assert seen in text
        text = text.replace(seen, escaped)
    target.write_text(text, encoding="utf-8")
    return target


def test_a_hostile_session_shows_its_text_as_text(
    chromium_browser: Browser, tmp_path: Path
) -> None:
    [source] = (RECORDINGS / "0.61.0" / "session_resume_edits" / "stream-json").glob(
        "gemini-home/tmp/*/chats/session-*.jsonl"
    )
    conversation = load_session(_hostile(source, tmp_path / "hostile.jsonl"))
    html = to_html(conversation)
    assert "<script" not in html
    assert "<iframe" not in html
    with file_page(chromium_browser, tmp_path) as open_file:
        page = open_file(html, "hostile.html")
        assert page.page.evaluate("typeof window.__pwned") == "undefined"
        count = "document.querySelectorAll('script, img, iframe, a, style:not(head style)').length"
        assert page.page.evaluate(count) == 0
        assert page.page.evaluate("getComputedStyle(document.body).display") == "block"
        # The payload is on the page, character for character, wherever the session had text;
        # in an answer, which is Markdown, `&amp;` is the entity it names.
        occurrences = page.page.evaluate(
            f"document.body.innerText.split({json.dumps(PAYLOAD)}).length - 1"
        )
        drawn = PAYLOAD.replace("&amp;", "&")  # a prefix of PAYLOAD: it is counted there too
        as_markdown = page.page.evaluate(
            f"document.body.innerText.split({json.dumps(drawn)}).length - 1"
        )
        assert (occurrences, as_markdown - occurrences) == (4, 1)
        assert len(PAYLOAD) > 100
        assert page.page.title() == PAYLOAD[:97] + "..."
        assert page.problems == []
