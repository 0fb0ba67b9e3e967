"""A session in which the user rejected a call (recorded by
tests/e2e/agents/test_gemini_rejected_saved.py): Gemini CLI saved the call only as its
``functionResponse``. The call is shown cancelled between the two answers, which stay apart in
every transcript, and the HTML transcript draws the answers' Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from kit.corpus import FIXTURES

from gemwire.events import ToolCallFinished, ToolError
from gemwire.sessions import load_session, to_html, to_markdown

RECORDING = FIXTURES / "gemini-sessions" / "0.61.0" / "acp_rejected_call"
[SESSION] = sorted(p for p in RECORDING.glob("session-*.jsonl") if ".events" not in p.name)


def test_golden_events() -> None:
    conversation = load_session(SESSION)
    assert conversation.problems == []
    events = [msgspec.to_builtins(e) for e in conversation.events()]
    golden = SESSION.with_suffix(".events.jsonl").read_text().splitlines()
    assert events == [json.loads(line) for line in golden]


def test_the_rejected_call_is_cancelled_between_the_answers() -> None:
    events = list(load_session(SESSION).events())
    said = [(e.type, getattr(e, "text", None) or getattr(e, "name", None)) for e in events]
    assert [s for s in said if s[0] not in ("session_started", "usage")] == [
        ("user_message", "write a.py"),
        ("message_delta", "I'll put it in `a.py`."),
        ("tool_call_started", "write_file"),
        ("tool_call_finished", None),
        ("message_delta", "Done: wrote a.py."),
    ]
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.output, finished.error) == (
        "cancelled",
        None,
        ToolError(type="unknown", message='Tool "write_file" was canceled by the user.'),
    )


def test_transcripts_keep_the_answers_apart_around_the_call() -> None:
    markdown = to_markdown(load_session(SESSION), secrets=())
    first, card, second = (
        markdown.index("I'll put it in `a.py`."),
        markdown.index("**edit · `write_file`** write_file — cancelled"),
        markdown.index("Done: wrote a.py."),
    )
    assert first < card < second
    html = to_html(load_session(SESSION), secrets=())
    assert '<div class="md"><p>I\'ll put it in <code>a.py</code>.</p>\n</div>' in html
    cancelled = '<div class="card status-cancelled kind-edit">'
    assert html.index("<code>a.py</code>") < html.index(cancelled) < html.index("Done: wrote")


def _answered(text: str, tmp_path: Path) -> str:
    """The HTML transcript of the recording with its last answer replaced by ``text``."""
    path = tmp_path / SESSION.name
    path.write_text(SESSION.read_text().replace("Done: wrote a.py.", json.dumps(text)[1:-1]))
    return to_html(load_session(path), secrets=())


def test_markdown_in_an_answer_makes_no_link_image_or_tag(tmp_path: Path) -> None:
    html = _answered(
        "**bold** ![pic](http://127.0.0.1:9/x.png) [go](javascript:alert(1)) "
        "<http://127.0.0.1:9/> <b onclick=x>tag</b>",
        tmp_path,
    )
    answer = html[html.index("<strong>") :]
    assert answer.startswith(
        "<strong>bold</strong> ![pic](http://127.0.0.1:9/x.png) [go](javascript:alert(1)) "
        "&lt;http://127.0.0.1:9/&gt; &lt;b onclick=x&gt;tag&lt;/b&gt;</p>"
    )
    assert "<a " not in html
    assert "<img" not in html


def test_an_answer_too_long_for_markdown_is_shown_as_text(tmp_path: Path) -> None:
    html = _answered("*a" * 40_000, tmp_path)
    assert f'<div class="text">{"*a" * 40_000}</div>' in html
    assert "<em>" not in html
