"""The page's one renderer (static/js/render.js) in a real browser, fed events directly:
exact texts, tool cards with coloured diffs, plans, subagents nested under their call, and a
hostile session's text shown as text with no request and no console error.

The page's own files come from the real server app (`web_kit.live_server`), so the CSP is
the one the page runs under.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browser import Watched, watched_page
from playwright.sync_api import Browser
from web_kit import LiveServer, live_server

HOSTILE = (
    '</pre></div><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<a href="javascript:window.__pwned=3">x</a><style>body{display:none}</style>'
    "<iframe src=http://127.0.0.1:9/></iframe>&amp;\u202egnp.exe\u202c"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("root")
    with live_server(str(root), str(root / "state")) as running:
        yield running


@pytest.fixture
def renderer(chromium_browser: Browser, server: LiveServer) -> Iterator[Watched]:
    """A page of the server's origin with render.js loaded as `window.R`."""
    with watched_page(chromium_browser, allowed=server.same_origin) as watched:
        server.log_in(watched.page)
        watched.page.goto(f"{server.origin}/static/js/render.js")
        watched.page.evaluate(
            """async () => {
                const sheet = document.createElement('link');
                sheet.rel = 'stylesheet';
                sheet.href = '/static/app.css';
                const loaded = new Promise((resolve) => sheet.onload = resolve);
                document.head.append(sheet);
                await loaded;
                window.R = await import('/static/js/render.js');
                window.conversation = new R.Conversation();
                document.body.replaceChildren(window.conversation.el);
            }"""
        )
        yield watched


def feed(page: Watched, events: list[dict[str, Any]]) -> None:
    page.page.evaluate(
        "(events) => { for (const e of events) window.conversation.add(e, true); }", events
    )


def text(page: Watched, selector: str) -> list[str]:
    found: list[str] = page.page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(e => e.textContent)", selector
    )
    return found


def ev(type_: str, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "agent": "acp:scripted", "session_id": "s0", **fields}


DIFF = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-helo\n+hello"


def conversation_events() -> list[dict[str, Any]]:
    return [
        ev("user_message", text="fix notes.txt"),
        ev("thought_delta", text="Planning "),
        ev("thought_delta", text="the fix."),
        ev(
            "plan_updated",
            entries=[
                {"content": "Read it", "status": "completed", "priority": "high"},
                {"content": "Fix it", "status": "in_progress", "priority": "high"},
            ],
        ),
        ev("message_delta", text="I will "),
        ev("message_delta", text="fix it."),
        ev(
            "tool_call_started",
            call_id="c1",
            name="replace",
            kind="edit",
            title="notes.txt",
            input={"file_path": "notes.txt"},
            locations=[{"path": "/w/notes.txt", "line": 1}],
            mcp_server=None,
            mcp_tool=None,
        ),
        ev("tool_call_updated", call_id="c1", status="in_progress", content="editing"),
        ev(
            "tool_call_finished",
            call_id="c1",
            status="completed",
            output="edited",
            error=None,
            diff=DIFF,
        ),
        ev("file_changed", path="/w/notes.txt", change="modified", call_id="c1", derived=False),
        ev("message_delta", text="Fixed."),
        ev(
            "turn_completed",
            ok=True,
            stop_reason="end_turn",
            error=None,
            answer="I will fix it.\n\nFixed.",
            usage={
                "input_tokens": 10,
                "output_tokens": 5,
                "cached_tokens": 0,
                "total_tokens": 15,
                "by_model": {},
                "cost_usd": 0.0123,
                "context_tokens": 1000,
                "context_window": 4000,
            },
            duration_ms=1500,
        ),
    ]


def test_a_conversation_renders_as_cards_plans_diffs_and_text(renderer: Watched) -> None:
    feed(renderer, conversation_events())
    assert text(renderer, ".user .text") == ["fix notes.txt"]
    assert text(renderer, ".answer .text") == ["I will fix it.", "Fixed."]
    assert text(renderer, ".thought summary") == ["Reasoning"]
    assert text(renderer, ".thought .text") == ["Planning the fix."]
    assert renderer.page.evaluate("document.querySelector('.thought').open") is False
    assert text(renderer, ".card .head .kind") == ["edit"]
    assert text(renderer, ".card .title") == ["notes.txt"]
    assert text(renderer, ".card .status") == ["completed"]
    assert text(renderer, ".card .output") == ["edited"]
    assert text(renderer, ".card .location") == ["/w/notes.txt:1"]
    assert json.loads(text(renderer, ".card .input pre")[0]) == {"file_path": "notes.txt"}
    lines = renderer.page.evaluate(
        "[...document.querySelectorAll('.card pre.diff .line')].map(e => [e.className, e.textContent])"
    )
    assert lines == [
        ["line file", "--- a/notes.txt"],
        ["line file", "+++ b/notes.txt"],
        ["line hunk", "@@ -1 +1 @@"],
        ["line del", "-helo"],
        ["line add", "+hello"],
    ]
    added = renderer.page.evaluate(
        "getComputedStyle(document.querySelector('.line.add')).backgroundColor"
    )
    assert added != renderer.page.evaluate(
        "getComputedStyle(document.querySelector('.line.del')).backgroundColor"
    )
    assert text(renderer, ".plan li span") == ["Read it", "Fix it"]
    checked = renderer.page.evaluate(
        "[...document.querySelectorAll('.plan input')].map(i => [i.checked, i.indeterminate])"
    )
    assert checked == [[True, False], [False, True]]
    assert text(renderer, ".files .path") == ["/w/notes.txt"]
    assert text(renderer, ".files .change") == ["modified"]
    assert text(renderer, ".files pre.diff .line.add") == ["+hello"]
    assert text(renderer, ".turn") == ["Done · end_turn · 1.5 s"]
    meters = renderer.page.evaluate("R.meters(conversation.meta).map(e => e.textContent)")
    assert meters == ["≈ $0.01 (estimate)", "context  25% (estimate)"]
    # The page follows the system's colour scheme.
    background = "getComputedStyle(document.body).backgroundColor"
    assert renderer.page.evaluate(background) == "rgb(251, 251, 250)"
    renderer.page.emulate_media(color_scheme="dark")
    assert renderer.page.evaluate(background) == "rgb(20, 20, 22)"
    assert renderer.problems == []


def test_subagent_work_nests_under_the_call_that_ran_it(renderer: Watched) -> None:
    call: dict[str, Any] = {
        "name": "invoke_agent",
        "kind": "think",
        "title": "investigator",
        "input": {},
        "locations": [],
        "mcp_server": None,
        "mcp_tool": None,
    }
    feed(
        renderer,
        [
            ev("tool_call_started", call_id="parent", **call),
            ev("message_delta", text="Reading.", parent_call_id="parent"),
            ev(
                "tool_call_started",
                call_id="child",
                parent_call_id="parent",
                **{**call, "name": "read_file", "kind": "read", "title": "app.py"},
            ),
            ev(
                "tool_call_finished",
                call_id="child",
                parent_call_id="parent",
                status="completed",
                output="x = 1",
                error=None,
                diff=None,
            ),
            ev(
                "tool_call_finished",
                call_id="parent",
                status="completed",
                output="done",
                error=None,
                diff=None,
            ),
            ev("message_delta", text="All done."),
        ],
    )
    nested = text(renderer, ".card .subagent .card .title")
    assert nested == ["app.py"]
    assert text(renderer, ".card .subagent .answer .text") == ["Reading."]
    assert text(renderer, ".stream > .answer .text") == ["All done."]
    assert text(renderer, ".stream > .card > .head .title") == ["investigator"]
    assert renderer.problems == []


def test_hostile_text_shows_as_text(renderer: Watched) -> None:
    huge = "x" * 300_000
    call: dict[str, Any] = {
        "name": HOSTILE,
        "kind": "execute",
        "title": HOSTILE,
        "input": {"command": HOSTILE},
        "locations": [{"path": HOSTILE, "line": None}],
        "mcp_server": HOSTILE,
        "mcp_tool": HOSTILE,
    }
    feed(
        renderer,
        [
            ev("session_started", model=HOSTILE, cwd=HOSTILE, agent_version=HOSTILE),
            ev("user_message", text=HOSTILE),
            ev("thought_delta", text=HOSTILE),
            ev("message_delta", text=HOSTILE),
            ev(
                "plan_updated", entries=[{"content": HOSTILE, "status": HOSTILE, "priority": "low"}]
            ),
            ev("tool_call_started", call_id=HOSTILE, **call),
            ev(
                "permission_requested",
                request_id="r1",
                call_id=HOSTILE,
                options=[{"option_id": HOSTILE, "name": HOSTILE, "kind": HOSTILE}],
            ),
            ev("permission_resolved", request_id="r1", call_id=HOSTILE, option_id=HOSTILE),
            ev(
                "tool_call_finished",
                call_id=HOSTILE,
                status=HOSTILE,
                output=huge + HOSTILE,
                error={"type": HOSTILE, "message": HOSTILE},
                diff=f"+{HOSTILE}\n-{HOSTILE}",
            ),
            ev("file_changed", path=HOSTILE, change=HOSTILE, call_id=HOSTILE, derived=False),
            ev("notice", severity=HOSTILE, message=HOSTILE, source="upstream"),
            ev("unknown", upstream_type=HOSTILE, raw=HOSTILE),
            ev("session_updated", update="session_info_update", data={"title": HOSTILE}),
            ev(
                "turn_completed",
                ok=False,
                stop_reason=HOSTILE,
                error={"kind": HOSTILE, "message": HOSTILE},
                answer=HOSTILE,
                usage=None,
                duration_ms=None,
            ),
            ev(HOSTILE),
        ],
    )
    page = renderer.page
    assert page.evaluate("window.__pwned") is None
    found = page.evaluate(
        "document.querySelectorAll('script, img, iframe, style, a, [onerror]').length"
    )
    assert found == 0
    assert text(renderer, ".user .text") == [HOSTILE]
    assert text(renderer, ".answer .text") == [HOSTILE]
    assert text(renderer, ".card .title") == [HOSTILE]
    assert text(renderer, ".card .output") == [huge + HOSTILE]
    assert text(renderer, ".files .path") == [HOSTILE]
    assert text(renderer, ".plan li span") == [HOSTILE]
    assert page.evaluate("conversation.meta.title") == HOSTILE
    # The huge line wraps inside the page: nothing is wider than the window.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert renderer.problems == []
