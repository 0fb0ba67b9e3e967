"""The HTML export in a real headless browser (Debian's chromium, driven over the DevTools
protocol on a pipe): every recorded session renders with no console error and no network
request, and a hostile session's text shows as text.

``make test`` installs chromium when it is missing (``apt-get install -y chromium``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus import FIXTURES, RECORDINGS
from opencode_db import build

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


class Browser:
    """Chromium with ``--remote-debugging-pipe``: commands on fd 3, replies on fd 4,
    each a JSON object ended by a NUL byte."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_browser, self._writer = os.pipe()
        self._reader, from_browser = os.pipe()

        def fds() -> None:  # in the child, before exec
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.process = subprocess.Popen(
            [
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            preexec_fn=fds,  # noqa: PLW1509 - the only way to put the pipes on fds 3 and 4
            pass_fds=(3, 4),  # kept open through the exec: what fds() put there
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=self.session)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._reader, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        request: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            request["sessionId"] = session
        os.write(self._writer, json.dumps(request).encode() + b"\0")
        while True:
            message = self._read()
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
            self.events.append(message)

    def open(self, url: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Load ``url``; the events seen until it loaded and settled."""
        self.events = []
        self.call("Page.navigate", session=self.session, url=url)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load in {timeout} s")
            self.events.append(self._read())
        self.evaluate("0")  # a round trip: what the load triggered has been reported
        return self.events

    def evaluate(self, expression: str) -> Any:
        reply = self.call(
            "Runtime.evaluate", session=self.session, expression=expression, returnByValue=True
        )
        return reply["result"].get("value")

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._writer)
        os.close(self._reader)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("no chromium: `apt-get install -y chromium` (make test installs it)")
    started = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    yield started
    started.close()


def problems(events: list[dict[str, Any]], url: str) -> list[str]:
    """Console errors, exceptions, log errors and any request but the page itself."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            found.append(f"console: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            found.append(f"log: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent" and params["request"]["url"] != url:
            found.append(f"request: {params['request']['url']}")
    return found


def _materialized(source: Path, target: Path) -> Path:
    """The session file with its placeholders made real paths (as a home would hold it)."""
    text = source.read_text(encoding="utf-8")
    for old, new in (("__WORKSPACE__", "/work/project"), ("__HOME__", "/home/user")):
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    return target


def _page(browser: Browser, html: str, path: Path) -> tuple[str, list[str]]:
    path.write_text(html, encoding="utf-8")
    url = path.resolve().as_uri()
    return url, problems(browser.open(url), url)


def test_every_recorded_session_renders_cleanly(browser: Browser, tmp_path: Path) -> None:
    assert len(SESSIONS) >= 60
    for n, source in enumerate(SESSIONS):
        conversation = load_session(_materialized(source, tmp_path / source.name))
        _, found = _page(browser, to_html(conversation), tmp_path / f"{n}.html")
        assert found == [], f"{source}: {found}"
        assert browser.evaluate("document.scripts.length") == 0
        assert browser.evaluate("document.querySelector('h1').textContent") != ""
        # Every message and tool call of the session is on the page.
        cards = sum(1 for e in conversation.events() if e.type == "tool_call_started")
        assert browser.evaluate("document.querySelectorAll('.card').length") >= cards, source


OTHER_AGENTS = sorted(
    p
    for folder in ("claude/0.16.2", "codex/0.16.0", "qwen/0.24.4", "opencode/1.18.33")
    for p in (FIXTURES / folder).glob("*")
    if p.suffix in (".jsonl", ".sql") and not p.name.endswith(".events.jsonl")
)


def test_every_other_agent_s_recorded_session_renders_cleanly(
    browser: Browser, tmp_path: Path
) -> None:
    """The same renderer for Claude Code's, Codex's, Qwen Code's and OpenCode's sessions."""
    assert len(OTHER_AGENTS) == 32
    for n, source in enumerate(OTHER_AGENTS):
        target = tmp_path / f"{n}-{source.name}"
        if source.suffix == ".sql":
            session = build(source.read_text(), target.with_suffix(".db"))
        else:
            session = _materialized(source, target)
        conversation = load_any(session)
        _, found = _page(browser, to_html(conversation), tmp_path / f"{n}.html")
        assert found == [], f"{source}: {found}"
        assert browser.evaluate("document.scripts.length") == 0
        cards = sum(1 for e in conversation.events() if e.type == "tool_call_started")
        assert browser.evaluate("document.querySelectorAll('.card').length") == cards, source


def test_subagent_work_renders_inside_the_call_that_ran_it(
    browser: Browser, materialize: Any, tmp_path: Path
) -> None:
    run = materialize("0.61.0", "session_subagent", "json")
    html = to_html(load_session(run.session_files()[0]))
    _, found = _page(browser, html, tmp_path / "subagent.html")
    assert found == []
    nested = browser.evaluate(
        "[...document.querySelectorAll('.card .subagent .card .name')].map(e => e.textContent)"
    )
    assert nested == ["read_file", "complete_task"]
    outer = browser.evaluate("document.querySelector('.card .name').textContent")
    assert outer == "invoke_agent"


def test_large_tool_output_renders(browser: Browser, materialize: Any, tmp_path: Path) -> None:
    run = materialize("0.61.0", "large_tool_output")
    conversation = load_session(run.session_files()[0])
    longest = max(
        len(e.output or "") for e in conversation.events() if isinstance(e, ToolCallFinished)
    )
    assert longest > 100_000
    _, found = _page(browser, to_html(conversation), tmp_path / "large.html")
    assert found == []
    shown = browser.evaluate(
        "Math.max(...[...document.querySelectorAll('pre')].map(p => p.textContent.length))"
    )
    assert shown >= longest


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


def test_a_hostile_session_shows_its_text_as_text(browser: Browser, tmp_path: Path) -> None:
    [source] = (RECORDINGS / "0.61.0" / "session_resume_edits" / "stream-json").glob(
        "gemini-home/tmp/*/chats/session-*.jsonl"
    )
    conversation = load_session(_hostile(source, tmp_path / "hostile.jsonl"))
    html = to_html(conversation)
    assert "<script" not in html
    assert "<iframe" not in html
    _, found = _page(browser, html, tmp_path / "hostile.html")
    assert found == []
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    count = "document.querySelectorAll('script, img, iframe, a, style:not(head style)').length"
    assert browser.evaluate(count) == 0
    assert browser.evaluate("getComputedStyle(document.body).display") == "block"
    # The payload is on the page, character for character, wherever the session had text.
    occurrences = browser.evaluate(
        f"document.body.innerText.split({json.dumps(PAYLOAD)}).length - 1"
    )
    assert occurrences >= 5
    assert len(PAYLOAD) > 100
    assert browser.evaluate("document.title") == PAYLOAD[:97] + "..."
