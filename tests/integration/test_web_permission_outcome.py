"""The page shows a permission the server denied on its own (``outcome: denied_no_client``)
as such, never as the user's own Reject: render.js in a real browser, fed the events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kit.browser import watched_page
from kit.web import LiveServer, live_server
from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("root")
    with live_server(str(root), str(root / "state")) as running:
        yield running


def ev(type_: str, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "agent": "acp:scripted", "session_id": "s0", **fields}


OPTIONS = [
    {"option_id": "yes", "name": "Allow", "kind": "allow_once"},
    {"option_id": "no", "name": "Reject", "kind": "reject_once"},
]


def _asked(n: str) -> list[dict[str, Any]]:
    call = f"t{n}"
    return [
        ev("tool_call_started", call_id=call, name="edit", kind="edit", title="a.txt", input={}),
        ev("permission_requested", request_id=n, call_id=call, options=OPTIONS),
    ]


def test_a_denial_no_client_chose_is_told_apart(
    chromium_browser: Browser, server: LiveServer
) -> None:
    events = [
        *_asked("0"),
        ev("permission_resolved", request_id="0", call_id="t0", option_id="no",
           outcome="denied_no_client"),
        *_asked("1"),
        ev("permission_resolved", request_id="1", call_id="t1", option_id="no"),
    ]  # fmt: skip
    with watched_page(chromium_browser, allowed=server.same_origin) as watched:
        server.log_in(watched.page)
        watched.page.goto(f"{server.origin}/static/js/render.js")
        shown = watched.page.evaluate(
            """async (events) => {
                const R = await import('/static/js/render.js');
                const conversation = new R.Conversation();
                document.body.replaceChildren(conversation.el);
                for (const e of events) conversation.add(e, true);
                return [...document.querySelectorAll('.permission.resolved')].map(e => e.textContent);
            }""",
            events,
        )
        assert watched.problems == []
    assert shown == ["Permission denied: no client answered", "Permission answered: Reject"]
