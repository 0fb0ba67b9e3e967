"""The page's one renderer (static/js/render.js) in a real browser, fed events directly:
exact texts, tool cards with coloured diffs, plans, subagents nested under their call, and a
hostile session's text shown as text with no request and no console error.

The page's own files come from the real server app (`web_kit.live_server`), so the CSP is
the one the page runs under.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.browser import Watched, watched_page
from kit.budget import load
from kit.hostile import CHARACTERS, texts
from kit.web import LiveServer, live_server
from playwright.sync_api import Browser

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


def usage(**fields: Any) -> dict[str, Any]:
    """A ``usage`` object: tokens, and whatever else the event carries."""
    counts = {"input_tokens": 100, "output_tokens": 20, "cached_tokens": 10, "total_tokens": 120}
    return {**counts, "by_model": {}, **fields}


def badges(page: Watched) -> list[str]:
    found: list[str] = page.page.evaluate("R.meters(conversation.meta).map(e => e.textContent)")
    return found


def test_usage_events_are_totalled_into_a_tokens_badge_or_a_cost_badge(renderer: Watched) -> None:
    """A saved session has only ``usage`` events (one per model answer), Gemini over ACP no
    price: its tokens are shown; a cost only where an event carries one."""
    feed(renderer, [ev("user_message", text="hi"), ev("usage", usage=usage())])
    assert badges(renderer) == ["120 tokens"]
    title = renderer.page.evaluate("R.meters(conversation.meta)[0].title")
    assert title == "100 input, 20 output, 10 cached tokens; no price known"
    feed(renderer, [ev("usage", usage=usage(context_tokens=500, context_window=1000))])
    assert badges(renderer) == ["240 tokens", "context  50% (estimate)"]
    # A live turn's turn_completed repeats its turn's usage event: counted once.
    feed(
        renderer,
        [
            ev("usage", usage=usage(cost_usd=0.25)),
            ev(
                "turn_completed",
                ok=True,
                stop_reason="end_turn",
                error=None,
                answer="",
                usage=usage(cost_usd=0.25, context_tokens=900, context_window=1000),
                duration_ms=None,
            ),
        ],
    )
    assert badges(renderer) == ["≈ $0.25 (estimate)", "context  90% (estimate)"]
    meta = renderer.page.evaluate("[conversation.meta.inputTokens, conversation.meta.outputTokens]")
    assert meta == [300, 60]
    # A turn whose usage came only with turn_completed (and its price: another helper's
    # ACP turns carry cost_usd there) is counted too.
    feed(
        renderer,
        [
            ev(
                "turn_completed",
                ok=True,
                stop_reason="end_turn",
                error=None,
                answer="",
                usage=usage(cost_usd=0.5),
                duration_ms=None,
            ),
        ],
    )
    assert badges(renderer)[0] == "≈ $0.75 (estimate)"
    meta = renderer.page.evaluate("[conversation.meta.inputTokens, conversation.meta.outputTokens]")
    assert meta == [400, 80]
    assert renderer.problems == []


MARKDOWN = """# Plan

Run `make test` **first**, then *read* the ~~old~~ _output_: snake_case_name stays.

1. one
2. two
   - nested `x`

- [docs](javascript:alert(1)) and ![logo](http://127.0.0.1:9/l.png)
- <http://127.0.0.1:9/> \\*not em\\*

> quoted **text**

```python
print("<b>hi</b>")
```
"""


def markup(page: Watched, selector: str) -> Any:
    """The element tree under ``selector`` as [tag, children...], text as strings."""
    return page.page.evaluate(
        """(s) => {
            const walk = (n) => n.nodeType === 3 ? n.data
                : [n.nodeName.toLowerCase(), ...[...n.childNodes].map(walk)];
            return [...document.querySelector(s).childNodes].map(walk);
        }""",
        selector,
    )


def test_answers_are_drawn_as_markdown_with_dom_calls_and_links_as_text(
    renderer: Watched,
) -> None:
    # Streamed in pieces that cut the Markdown anywhere.
    pieces = [MARKDOWN[i : i + 7] for i in range(0, len(MARKDOWN), 7)]
    streamed = renderer.page.evaluate(
        """(pieces) => {
            for (const text of pieces) {
                conversation.add({type: 'message_delta', agent: 'acp:scripted', text}, true);
            }
            return document.querySelector('.answer .text').textContent;
        }""",
        pieces,
    )
    # Until the next frame it shows as it came, as text.
    assert streamed == MARKDOWN
    renderer.page.evaluate("conversation.flush()")
    assert markup(renderer, ".answer .text") == [
        ["h3", "Plan"],
        [
            "p",
            "Run ",
            ["code", "make test"],
            " ",
            ["strong", "first"],
            ", then ",
            ["em", "read"],
            " the ",
            ["del", "old"],
            " ",
            ["em", "output"],
            ": snake_case_name stays.",
        ],
        ["ol", ["li", "one"], ["li", "two", ["ul", ["li", "nested ", ["code", "x"]]]]],
        [
            "ul",
            [
                "li",
                ["span", "docs", " ", ["span", "(javascript:alert(1))"]],
                " and ",
                ["span", "logo", " ", ["span", "(http://127.0.0.1:9/l.png)"]],
            ],
            ["li", ["span", "http://127.0.0.1:9/"], " *not em*"],
        ],
        ["blockquote", ["p", "quoted ", ["strong", "text"]]],
        ["pre", ["code", 'print("<b>hi</b>")']],
    ]
    assert renderer.page.evaluate("document.querySelectorAll('a, img').length") == 0
    # The frame draws it by itself too.
    feed(renderer, [ev("tool_call_finished", call_id="c", status="completed", output=None,
                       error=None, diff=None), ev("message_delta", text="**late**")])  # fmt: skip
    renderer.page.wait_for_function(
        "document.querySelectorAll('.answer .text.md strong').length === 3"
    )
    assert renderer.problems == []


def test_an_agent_s_replay_is_collapsed_and_a_saved_history_goes_first(
    renderer: Watched,
) -> None:
    feed(
        renderer,
        [
            ev("user_message", text="<session_context>…", replay=True),
            ev("message_delta", text="[Function Call: replace]", replay=True),
            ev("user_message", text="go on"),
            ev("message_delta", text="Going on."),
        ],
    )
    renderer.page.evaluate(
        """(events) => conversation.history(events, 'Saved session')""",
        [ev("user_message", text="fix it"), ev("message_delta", text="Fixed.")],
    )
    assert text(renderer, ".stream > *:not(.answer, .user)") == [
        "Saved sessionfix itFixed.",
        "The history as the agent replayed it<session_context>…[Function Call: replace]",
    ]
    assert renderer.page.evaluate("document.querySelector('details.replay').open") is False
    assert text(renderer, ".stream > .user .text") == ["go on"]
    assert text(renderer, ".stream > .answer .text") == ["Going on."]
    # Only the live prompts are the session's own (the history is cut by them).
    assert renderer.page.evaluate("conversation.prompts") == ["go on"]
    assert renderer.problems == []


@pytest.mark.parametrize(
    ("saved", "prompts", "kept"),
    [
        (["a", "b"], [], ["a", "b"]),
        (["a", "b", "c"], ["c"], ["a", "b"]),
        (["a", "b", "c", "d"], ["c", "d"], ["a", "b"]),
        # The saved session a turn behind the live one: nothing of the history is lost.
        (["a", "b", "c"], ["c", "d"], ["a", "b"]),
        (["a", "b"], ["c"], ["a", "b"]),
        # A prompt said again: the latest turns are the session's own.
        (["a", "a"], ["a"], ["a"]),
    ],
)
def test_the_history_is_cut_where_this_session_s_own_turns_begin(
    renderer: Watched, saved: list[str], prompts: list[str], kept: list[str]
) -> None:
    events = [ev("session_started", model="m", cwd="/w", agent_version="1")]
    for prompt in saved:
        events += [ev("user_message", text=prompt), ev("message_delta", text=f"re {prompt}")]
    cut = renderer.page.evaluate(
        """async ([events, prompts]) => {
            const C = await import('/static/js/conversation.js');
            return C.historyBefore(events, prompts).filter((e) => e.type === 'user_message')
                .map((e) => e.text);
        }""",
        [events, prompts],
    )
    assert cut == kept


MARKS = "*_~`[]()<>!#-+1. \n\\:"
"""The characters Markdown is made of, for texts that are mostly syntax."""
DRAWN = {"P", "H3", "H4", "H5", "H6", "STRONG", "EM", "DEL", "CODE", "PRE", "UL", "OL", "LI",
         "BLOCKQUOTE", "HR", "SPAN"}  # fmt: skip


def draw(page: Watched, source: str) -> dict[str, Any]:
    """``source`` drawn by markdown.js: the tags it made, its text, how long it took."""
    found: dict[str, Any] = page.page.evaluate(
        """async (source) => {
            const M = await import('/static/js/markdown.js');
            const box = document.createElement('div');
            const started = performance.now();
            box.append(M.markdown(source));
            const ms = performance.now() - started;
            return {tags: [...new Set([...box.querySelectorAll('*')].map(e => e.nodeName))],
                    text: box.textContent, ms};
        }""",
        source,
    )
    return found


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=texts(CHARACTERS + MARKS * 4, max_size=200))
def test_any_text_draws_as_the_subset_and_keeps_its_words(renderer: Watched, source: str) -> None:
    drawn = draw(renderer, source)
    assert set(drawn["tags"]) <= DRAWN
    # What is not syntax is kept: every run of letters and digits is still there.
    for word in re.findall(r"[A-Za-z0-9\u00e9\u20ac]+", source):
        assert word in drawn["text"]


@pytest.mark.parametrize(
    "source",
    [
        "[" * 300_000,
        "*a " * 100_000,
        "_a " * 100_000,
        "**a " * 75_000,
        "`" * 1000 + " x " + "".join("`" * n + "a" for n in range(1, 700)),
        "<a:" * 100_000,
        "> " * 150_000 + "deep",
        "".join("  " * n + "- item\n" for n in range(2000)),
        "#" + " " * 300_000 + "x",
        "- a\n" + "\n" * 200_000 + "  b",
        "*_~~" * 50_000 + "x" + "~~_*" * 50_000,
    ],
    ids=[
        "brackets",
        "stars",
        "underscores",
        "doubles",
        "ticks",
        "autolinks",
        "quotes",
        "nested-lists",
        "heading",
        "blank-lines",
        "nested-marks",
    ],
)
def test_hostile_markdown_draws_in_linear_time(renderer: Watched, source: str) -> None:
    """Text made to make a parser scan the rest of the text from each character, or nest
    until the stack is gone: drawn in well under a second here (quadratic would be minutes;
    the bound grows with the machine's load, as the suite's time budget does)."""
    drawn = draw(renderer, source)
    assert set(drawn["tags"]) <= DRAWN
    assert drawn["ms"] < 3000 * max(1.0, load())
    assert renderer.problems == []


def test_the_permission_dialog_shows_the_change_asked_for(renderer: Watched) -> None:
    """``permission_requested`` may carry the call's ``title``, ``diff`` and ``content``:
    shown, the diff coloured as in the cards; without them, what the page has of the call."""
    page = renderer.page
    details = """async ([event, callEvents]) => {
        const C = await import('/static/js/conversation.js');
        const conversation = new R.Conversation();
        for (const e of callEvents) conversation.add(e, true);
        const box = document.createElement('div');
        box.append(...C.permissionDetails(event, conversation.liveCard('c1')));
        return [...box.querySelectorAll('h4, pre, .line, summary')]
            .map(e => [e.nodeName.toLowerCase() + (e.className ? '.' + e.className : ''),
                       e.nodeName === 'PRE' && e.classList.contains('diff') ? '' : e.textContent]);
    }"""
    started = ev(
        "tool_call_started", call_id="c1", name="replace", kind="edit", title="notes.txt",
        input={"file_path": "notes.txt"}, locations=[], mcp_server=None, mcp_tool=None,
    )  # fmt: skip
    asked = ev(
        "permission_requested", request_id="r1", call_id="c1", title="Edit notes.txt",
        diff=DIFF, content=HOSTILE,
        options=[{"option_id": "a", "name": "Allow", "kind": "allow_once"}],
    )  # fmt: skip
    assert page.evaluate(details, [asked, [started]]) == [
        ["h4", "The change"],
        ["pre.diff", ""],
        ["span.line file", "--- a/notes.txt"],
        ["span.line file", "+++ b/notes.txt"],
        ["span.line hunk", "@@ -1 +1 @@"],
        ["span.line del", "-helo"],
        ["span.line add", "+hello"],
        ["pre.content", HOSTILE],
        ["summary", "Input"],
        ["pre", '{\n  "file_path": "notes.txt"\n}'],
    ]
    # An older event (no diff, no content): the call's input and, once it has one, its diff.
    bare = {k: v for k, v in asked.items() if k not in ("title", "diff", "content")}
    assert page.evaluate(details, [bare, [started]]) == [
        ["summary", "Input"],
        ["pre", '{\n  "file_path": "notes.txt"\n}'],
    ]
    updated = ev("tool_call_updated", call_id="c1", status="in_progress", content="partial")
    assert page.evaluate(details, [bare, [started, updated]])[-1] == ["pre.content", "partial"]
    assert page.evaluate("document.querySelectorAll('script, img, iframe, a').length") == 0
    assert page.evaluate("window.__pwned") is None
    assert renderer.problems == []


def test_paths_under_the_session_s_folder_show_relative_to_it(renderer: Watched) -> None:
    cwd = "/srv/work/project"
    feed(
        renderer,
        [
            ev("session_started", model="m", cwd=cwd, agent_version="1"),
            ev(
                "tool_call_started",
                call_id="c1",
                name="write_file",
                kind="edit",
                title=f"Writing to {cwd}/src/app.py",
                input={"file_path": f"{cwd}/src/app.py"},
                locations=[{"path": f"{cwd}/src/app.py", "line": 3}, {"path": "/etc/hosts"}],
                mcp_server=None,
                mcp_tool=None,
            ),
            ev(
                "tool_call_finished",
                call_id="c1",
                status="completed",
                output="ok",
                error=None,
                diff=f"--- {cwd}/src/app.py\n+++ {cwd}/src/app.py\n@@ -1 +1 @@\n-{cwd}/x\n+y",
            ),
            ev(
                "file_changed",
                path=f"{cwd}/src/app.py",
                change="modified",
                call_id="c1",
                derived=False,
            ),
        ],
    )
    assert text(renderer, ".started") == ["Session started · acp:scripted · m · in project · 1"]
    assert renderer.page.evaluate("document.querySelector('.started').title") == cwd
    assert text(renderer, ".card .title") == ["Writing to src/app.py"]
    assert text(renderer, ".card .location") == ["src/app.py:3", "/etc/hosts"]
    # A diff's file headers are shortened; its lines are the file's, as they are.
    assert text(renderer, ".card pre.diff .line") == [
        "--- src/app.py", "+++ src/app.py", "@@ -1 +1 @@", f"-{cwd}/x", "+y"
    ]  # fmt: skip
    assert text(renderer, ".files .path") == ["src/app.py"]
    # The input is the call's, exactly.
    assert json.loads(text(renderer, ".card .input pre")[0]) == {"file_path": f"{cwd}/src/app.py"}
    assert renderer.problems == []


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    source=texts("ab 1.-*>`#~_\n\n\n  ", min_size=1, max_size=300),
    size=st.integers(min_value=1, max_value=40),
)
def test_an_answer_drawn_as_it_streams_is_drawn_as_a_whole(
    renderer: Watched, source: str, size: int
) -> None:
    """Drawn again each frame from where it is settled: the same as drawing it at once."""
    streamed, whole = renderer.page.evaluate(
        """async ([source, size]) => {
            const M = await import('/static/js/markdown.js');
            const c = new R.Conversation();
            for (let i = 0; i < source.length; i += size) {
                c.add({type: 'message_delta', agent: 'a', text: source.slice(i, i + size)});
                c.flush();
            }
            const box = document.createElement('div');
            box.append(M.markdown(source));
            return [c.el.querySelector('.answer .text').innerHTML, box.innerHTML];
        }""",
        [source, size],
    )
    assert streamed == whole
