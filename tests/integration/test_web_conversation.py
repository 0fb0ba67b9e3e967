"""A conversation on the page in a real browser, against the real server app on uvicorn with
a scripted ACP agent: streamed answer and reasoning, a tool card with its diff, the plan, a
permission dialog with exactly the offered options, reload mid-turn and afterwards (every event
once), cancel, Esc denying, two tabs without cross-talk, hostile agent text shown as text."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from kit.browser import Watched, watched_page
from kit.web import CuttableProxy, LiveServer, ScriptedAgents, WebAgent, live_server
from playwright.sync_api import Browser, Page, expect

from gemwire.server.routes_page import CONTENT_SECURITY_POLICY
from gemwire.server.security import session_cookie
from gemwire.testing import ScriptedAgent

HOSTILE = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '<a href="javascript:window.__pwned=3">x</a>\u202egnp.exe'
)
GATE = threading.Event()
DONE = re.compile(r"Done · end_turn · [\d.]+ m?s")
CANCELLED = re.compile(r"Stopped · cancelled · [\d.]+ m?s")
OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


async def tool_update(agent: ScriptedAgent, sid: str, **update: Any) -> None:
    """A ``session/update`` whose fields may be named ``kind`` (`ScriptedAgent.update`'s
    own parameter)."""
    await agent.send({"method": "session/update", "params": {"sessionId": sid, "update": update}})


async def script(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    """``wait``: until cancelled; ``echo X``: says X; else writes notes.txt, if allowed."""
    assert isinstance(agent, WebAgent)
    prompt = params["prompt"][0]["text"]
    if prompt == "wait":
        await agent.say(sid, "Waiting.")
        await agent.cancelled.wait()
        return "cancelled"
    if prompt.startswith("echo "):
        await agent.say(sid, prompt.removeprefix("echo "))
        return "end_turn"
    commands = [
        {"name": "review", "description": "Review the changes"},
        {"name": "memory", "description": "Manage memory."},
        {"name": "memory show", "description": "Shows the memory."},
        {"name": "memory add", "description": "Adds to memory.", "input": {"hint": "what"}},
    ]
    await agent.update(sid, "available_commands_update", availableCommands=commands)
    text = {"type": "text", "text": "Planning the file."}
    await agent.update(sid, "agent_thought_chunk", content=text)
    step = {"content": "Write notes.txt", "priority": "high"}
    await agent.update(sid, "plan", entries=[{**step, "status": "in_progress"}])
    await agent.say(sid, "I will write ")
    await agent.say(sid, "notes.txt.")
    path = str(Path(agent.cwd) / "notes.txt")
    await tool_update(
        agent,
        sid,
        sessionUpdate="tool_call",
        toolCallId="call-1",
        title="notes.txt",
        kind="edit",
        status="pending",
        rawInput={"file_path": path, "content": "hello\n"},
        locations=[{"path": path}],
    )
    asked = {"sessionId": sid, "toolCall": {"toolCallId": "call-1"}, "options": OPTIONS}
    answer = await agent.request("session/request_permission", asked)
    if answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}:
        await anyio.Path(path).write_text("hello\n", encoding="utf-8")
        diff = {"type": "diff", "path": path, "oldText": None, "newText": "hello\n"}
        await agent.update(
            sid, "tool_call_update", toolCallId="call-1", status="completed", content=[diff]
        )
        await agent.update(sid, "plan", entries=[{**step, "status": "completed"}])
        cost = {"amount": 0.0123, "currency": "USD"}
        await agent.update(sid, "usage_update", used=1000, size=4000, cost=cost)
        await agent.say(sid, "Written.")
        # The turn goes on until the test opens the gate (it reloads the page meanwhile).
        await anyio.to_thread.run_sync(GATE.wait)
        await agent.say(sid, " Done.")
    else:
        denied = {"type": "content", "content": {"type": "text", "text": "denied"}}
        await agent.update(
            sid, "tool_call_update", toolCallId="call-1", status="failed", content=[denied]
        )
        await agent.say(sid, "Not allowed.")
    return "end_turn"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


@pytest.fixture
def server(root: Path, tmp_path: Path) -> Iterator[LiveServer]:
    GATE.clear()

    def launcher(tg: TaskGroup) -> ScriptedAgents:
        return ScriptedAgents(tg, script, title=f"Scripted {HOSTILE}")

    # A reload's grace that no slow machine outlasts: the test never races the clock.
    state = str(tmp_path / "state")
    with live_server(str(root), state, launcher=launcher, permission_grace=3600) as running:
        try:
            yield running
        finally:
            GATE.set()


@pytest.fixture
def watched(chromium_browser: Browser, server: LiveServer) -> Iterator[Watched]:
    with watched_page(chromium_browser, allowed=server.same_origin) as page:
        server.log_in(page.page)
        yield page


def texts(page: Page, selector: str) -> list[str]:
    found: list[str] = page.evaluate(
        "(s) => [...document.querySelectorAll(s)].map(e => e.textContent)", selector
    )
    return found


def shown(page: Page) -> list[str]:
    """The text of each thing in the conversation, without the clock times of calls (a call
    seen live shows when it ran; one read back from the log cannot know)."""
    found: list[str] = page.evaluate(
        """[...document.querySelectorAll('.stream > *')].map(e => {
            const copy = e.cloneNode(true);
            copy.querySelectorAll('.time').forEach(t => t.remove());
            return copy.textContent;
        })"""
    )
    return found


def open_page(page: Page, server: LiveServer) -> None:
    response = page.goto(f"{server.origin}/#/chat")
    assert response is not None
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def start(page: Page) -> str:
    """A new conversation with the scripted agent, from the page's picker; its session id."""
    page.get_by_role("button", name="Start").click()
    expect(page.locator(".session-bar")).to_be_visible()
    return page.url.rsplit("/", 1)[1]


def send(page: Page, text: str) -> None:
    page.get_by_label("Message").fill(text)
    page.get_by_label("Message").press("Enter")


def test_a_conversation_with_a_tool_a_diff_and_a_permission_survives_reloads(
    watched: Watched, server: LiveServer, root: Path, tmp_path: Path
) -> None:
    page = watched.page
    open_page(page, server)
    start(page)
    assert texts(page, "select.mode option") == ["Default", "Plan only"]
    page.get_by_label("Mode", exact=True).select_option("plan")
    expect(page.get_by_label("Mode", exact=True)).to_have_value("plan")
    assert texts(page, "select[aria-label='Effort'] option") == ["Low", "High"]
    expect(page.get_by_label("Effort")).to_have_value("low")
    page.get_by_label("Effort").select_option("high")
    expect(page.get_by_label("Effort")).to_have_value("high")
    # The model the agent announced as running is the one shown as chosen.
    assert texts(page, "select.model option") == ["Fast", "Deep"]
    expect(page.get_by_label("Model")).to_have_value("fast")
    with page.expect_response(lambda r: r.url.endswith("/model")) as answered:
        page.get_by_label("Model").select_option("deep")
    assert answered.value.status == 200
    assert answered.value.json()["current_model"] == "deep"
    send(page, "write notes")
    dialog = page.locator("dialog.permission-dialog")
    expect(dialog).to_be_visible()
    assert texts(page, "dialog .option") == ["Allow once", "Reject"]
    expect(page.locator(".card .status")).to_have_text("waiting for permission")
    # It shows what is asked for: the call's input, as the page has it.
    expect(dialog.locator(".tool")).to_have_text("notes.txt")
    shown_input = json.loads(dialog.locator("details.input pre").text_content() or "")
    assert shown_input == {"file_path": str(root / "notes.txt"), "content": "hello\n"}
    assert dialog.locator("details.input").evaluate("(d) => d.open") is True
    # The dialog is keyboard-operable: its first option has the focus.
    expect(page.get_by_role("button", name="Allow once")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".answer .text").nth(1)).to_have_text("Written.")
    expect(dialog).to_be_hidden()
    # Reload while the turn runs: the same events, each once, then the rest of the turn.
    before = shown(page)
    page.reload()
    expect(page.locator(".stream > *")).to_have_count(len(before))
    assert shown(page) == before
    expect(page.get_by_role("button", name="Cancel")).to_be_visible()
    expect(page.get_by_label("Mode", exact=True)).to_have_value("plan")
    expect(page.get_by_label("Effort")).to_have_value("high")
    expect(page.get_by_label("Model")).to_have_value("deep")
    GATE.set()
    expect(page.locator(".turn")).to_have_text(DONE)
    assert texts(page, ".user .text") == ["write notes"]
    assert texts(page, ".answer .text") == ["I will write notes.txt.", "Written. Done."]
    assert texts(page, ".thought .text") == ["Planning the file."]
    assert texts(page, ".card .title") == ["notes.txt"]
    assert texts(page, ".card .kind") == ["edit"]
    assert texts(page, ".card .status") == ["completed"]
    assert texts(page, ".card .permission") == [
        "Permission asked: Allow once / Reject",
        "Permission answered: Allow once",
    ]
    added = texts(page, ".card pre.diff .line.add")
    assert added == ["+hello"]
    assert (root / "notes.txt").read_text(encoding="utf-8") == "hello\n"
    # Paths under the session's folder are shown relative to it (the whole path on hover).
    assert texts(page, ".files .path") == ["notes.txt"]
    assert page.locator(".files .path").get_attribute("title") == str(root / "notes.txt")
    assert texts(page, ".plan li span") == ["Write notes.txt"]
    assert page.evaluate("document.querySelector('.plan input').checked") is True
    assert texts(page, ".meters > *") == ["≈ $0.01 (estimate)", "context  25% (estimate)"]
    # Slash commands, as announced: picked with the arrows and Enter, or Tab; a command's
    # sub-commands and what it takes stay shown after its name and a space.
    message = page.get_by_label("Message")
    message.fill("/re")
    assert texts(page, ".commands .command") == ["/review"]
    message.fill("/me")
    expect(page.locator(".commands .command")).to_have_text(
        ["/memory", "/memory show", "/memory add"]
    )
    message.press("ArrowDown")
    message.press("ArrowDown")
    expect(page.locator(".commands [aria-selected=true] .command")).to_have_text("/memory show")
    message.press("Enter")
    expect(message).to_have_value("/memory show ")
    expect(page.locator(".command-hint")).to_have_text("/memory show — Shows the memory.")
    expect(page.locator(".commands")).to_be_hidden()
    message.fill("/memory ")
    expect(page.locator(".commands .command")).to_have_text(["/memory show", "/memory add"])
    expect(page.locator(".command-hint")).to_have_text("/memory — Manage memory.")
    message.press("ArrowUp")
    expect(page.locator(".commands [aria-selected=true] .command")).to_have_text("/memory add")
    message.press("Tab")
    expect(message).to_have_value("/memory add ")
    expect(page.locator(".command-hint")).to_have_text("/memory add what — Adds to memory.")
    message.fill("/memory a")
    message.press("Tab")
    expect(message).to_have_value("/memory add ")
    message.fill("/mem")
    message.press("Escape")
    expect(page.locator(".commands")).to_be_hidden()
    expect(message).to_have_value("/mem")
    message.fill("")
    # A reload after the turn: every event exactly once, nothing lost.
    after = shown(page)
    page.reload()
    expect(page.locator(".turn")).to_have_text(DONE)
    assert shown(page) == after
    assert texts(page, ".card") == texts(page, ".card")[:1]
    # Readable at 1280, 800 and 390 px (a phone): nothing wider than the window.
    for width in (1280, 800, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(tmp_path / f"conversation-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert watched.problems == []


def test_cancel_esc_denies_two_tabs_and_hostile_text(
    chromium_browser: Browser, watched: Watched, server: LiveServer, root: Path
) -> None:
    first = watched.page
    second = first.context.new_page()
    # The agent list: a hostile title is text; the absent agent is listed, not choosable.
    open_page(first, server)
    expect(first.locator("#agent option")).to_have_count(2)
    assert texts(first, "#agent option") == [
        f"Scripted {HOSTILE}",
        "Absent (not available)",
    ]
    assert first.evaluate("document.querySelector('#agent option:last-child').disabled")
    one = start(first)
    open_page(second, server)
    # A workspace outside the roots: the API's error is shown, and nothing starts.
    second.get_by_label("Workspace").fill("/")
    second.get_by_role("button", name="Start").click()
    expect(second.locator(".flash")).to_have_text(f"'/' is outside the server's roots ({root})")
    second.get_by_label("Workspace").fill(str(root))
    two = start(second)
    assert one != two
    send(first, f"echo {HOSTILE}")
    send(second, "echo from the second tab")
    expect(first.locator(".turn")).to_have_text(DONE)
    expect(second.locator(".turn")).to_have_text(DONE)
    assert texts(first, ".answer .text") == [HOSTILE]
    assert texts(second, ".answer .text") == ["from the second tab"]
    assert first.evaluate("window.__pwned") is None
    view = "#view :is(script, img, iframe, a[href^='javascript'], [onerror])"
    assert first.evaluate(f'document.querySelectorAll("{view}").length') == 0
    # Cancel a running turn with Esc in the message box.
    send(first, "wait")
    expect(first.locator(".answer .text").nth(1)).to_have_text("Waiting.")
    expect(first.get_by_role("button", name="Cancel")).to_be_visible()
    first.get_by_label("Message").press("Escape")
    expect(first.locator(".turn").nth(1)).to_have_text(CANCELLED)
    expect(first.get_by_role("button", name="Cancel")).to_be_hidden()
    # A turn that did not end normally can be continued.
    first.get_by_role("button", name="Continue").click()
    expect(first.locator(".user .text").last).to_have_text("Continue.")
    expect(first.locator("dialog.permission-dialog")).to_be_visible()
    first.get_by_role("button", name="Reject").click()
    expect(first.locator(".turn").nth(2)).to_have_text(DONE)
    expect(first.get_by_role("button", name="Continue")).to_be_hidden()
    # Esc in the permission dialog answers nothing: denied.
    send(second, "write notes")
    expect(second.locator("dialog.permission-dialog")).to_be_visible()
    second.keyboard.press("Escape")
    expect(second.locator(".turn").nth(1)).to_have_text(DONE)
    assert texts(second, ".card .permission")[-1] == "Permission no answer: denied"
    assert texts(second, ".answer .text")[-1] == "Not allowed."
    assert not (root / "notes.txt").exists()
    assert watched.problems == []


def test_a_reload_with_the_permission_dialog_open_brings_it_back(
    watched: Watched, server: LiveServer, root: Path
) -> None:
    """The server waits a grace (`server`'s: an hour) after its last subscriber leaves: the
    reloaded page is back in time, shows the same dialog, and its answer is the one the agent
    gets."""
    page = watched.page
    open_page(page, server)
    start(page)
    send(page, "write notes")
    dialog = page.locator("dialog.permission-dialog")
    expect(dialog).to_be_visible()
    page.reload()
    expect(dialog).to_be_visible()
    assert texts(page, "dialog .option") == ["Allow once", "Reject"]
    expect(page.get_by_role("button", name="Allow once")).to_be_focused()
    page.get_by_role("button", name="Allow once").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".answer .text").nth(1)).to_have_text("Written.")
    GATE.set()
    expect(page.locator(".turn")).to_have_text(DONE)
    assert texts(page, ".card .permission") == [
        "Permission asked: Allow once / Reject",
        "Permission answered: Allow once",
    ]
    assert (root / "notes.txt").read_text(encoding="utf-8") == "hello\n"
    assert watched.problems == []


def test_losing_the_network_mid_turn_loses_nothing(
    chromium_browser: Browser, root: Path, tmp_path: Path
) -> None:
    """The page talks to the server through a proxy that drops every connection mid-turn:
    the stream comes back by itself and each event shows once."""
    GATE.clear()
    proxy = CuttableProxy()

    def launcher(tg: TaskGroup) -> ScriptedAgents:
        return ScriptedAgents(tg, script)

    state = str(tmp_path / "state")
    allowed = (proxy.origin,)
    try:
        with (
            live_server(str(root), state, launcher=launcher, allow_origins=allowed) as server,
            watched_page(chromium_browser, allowed=lambda url: url.startswith(proxy.origin)) as w,
        ):
            proxy.target = ("127.0.0.1", server.config.port)
            page = w.page
            name, value = session_cookie(server.config)
            page.context.add_cookies([{"name": name, "value": value, "url": proxy.origin}])
            page.goto(f"{proxy.origin}/#/chat")
            start(page)
            send(page, "write notes")
            page.get_by_role("button", name="Allow once").click()
            expect(page.locator(".answer .text").nth(1)).to_have_text("Written.")
            proxy.cut()
            expect(page.locator("#connection")).to_have_text("reconnecting…")
            GATE.set()  # the rest of the turn, while the page is reconnecting
            expect(page.locator(".turn")).to_have_text(DONE)
            expect(page.locator("#connection")).to_have_text("")
            assert texts(page, ".answer .text") == ["I will write notes.txt.", "Written. Done."]
            assert len(texts(page, ".card")) == 1
            assert len(texts(page, ".stream > *")) == 7
            # Chromium logs the stream the proxy cut; nothing else went wrong.
            cut = "console: Failed to load resource: net::ERR_INCOMPLETE_CHUNKED_ENCODING"
            assert [problem for problem in w.problems if problem != cut] == []
    finally:
        GATE.set()
        proxy.close()


def test_the_selectors_come_back_when_a_session_is_opened_again_in_the_tab(
    watched: Watched, server: LiveServer
) -> None:
    """Sessions, then "This server's sessions", then a session: the same tab builds the
    conversation view again, its mode, model and option selectors with it."""
    page = watched.page
    open_page(page, server)
    first = start(page)
    expect(page.get_by_label("Mode", exact=True)).to_have_value("default")
    send(page, "echo one")
    expect(page.locator(".turn")).to_have_text(DONE)
    page.goto(f"{server.origin}/#/chat")
    second = start(page)
    for session in (first, second, first):
        page.get_by_role("link", name="Sessions").click()
        page.locator(f".server-sessions a[href='#/chat/{session}']").click()
        expect(page).to_have_url(re.compile(f".*#/chat/{session}$"))
        expect(page.get_by_label("Mode", exact=True)).to_have_value("default")
        expect(page.get_by_label("Model")).to_have_value("fast")
        expect(page.get_by_label("Effort")).to_have_value("low")
    expect(page.locator(".answer .text")).to_have_text(["one"])
    # An unknown session is a message with the way back, not a 404 in the console.
    page.goto(f"{server.origin}/#/chat/s_0123456789abcdef")
    expect(page.locator(".flash")).to_have_text("No session s_0123456789abcdef on this server.")
    page.get_by_role("link", name="Start a new conversation").click()
    expect(page.get_by_role("button", name="Start")).to_be_visible()
    assert watched.problems == []
