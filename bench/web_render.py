"""The web page's renderer in chromium: the first screen of a long conversation, and keeping
up with a stream of deltas.

    .venv/bin/python bench/web_render.py [--events 5000] [--rate 1000] [--seconds 5] [--repeat 3]

The page's own files come from the real app (``create_app`` on uvicorn, 127.0.0.1, a free
port); Playwright drives Debian's chromium (``make browser``).

First screen: ``--events`` envelopes as the SSE stream delivers them (JSON text), a mix of what
a session holds (prompts, answer and reasoning deltas, tool calls with 2 KB of output and a
diff, file changes, plan updates, turn ends), parsed and rendered by `Conversation`, until the
browser has laid out and painted the result. Baseline in the same run: ``JSON.parse`` of the
same envelopes alone. Best of ``--repeat``.

Streaming: answer deltas at ``--rate`` a second for ``--seconds``, added each animation frame
as a live page would get them (one paragraph that grows to 30 KB in 5 s: the worst case for
drawing it as Markdown, which the page does in frames of its own, timed too); reported: the
share of the main thread the renderer used, and how far behind the last frame was when the
stream ended (0 = kept up).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import uvicorn
from playwright.sync_api import sync_playwright

from gemwire.server import ServerConfig, create_app
from gemwire.server.run import bind
from gemwire.server.security import session_cookie

TOKEN = "bench-token"


def login_cookie(origin: str) -> tuple[str, str]:
    """The login cookie (name, value) of the server at ``origin``: named for its port,
    derived from `TOKEN`."""
    port = int(origin.rsplit(":", 1)[1])
    config = ServerConfig(host="127.0.0.1", port=port, token=TOKEN, roots=("/",), state_dir="/")
    return session_cookie(config)


@contextmanager
def serving(root: str, **changes: Any) -> Iterator[str]:
    """The app on a free port in a thread of its own; its origin. ``changes`` are more
    `ServerConfig` fields (``sessions_home``, ...)."""
    sock = bind("127.0.0.1", 0)
    config = ServerConfig(
        host="127.0.0.1",
        port=sock.getsockname()[1],
        token=TOKEN,
        roots=(root,),
        state_dir=f"{root}/state",
        **changes,
    )
    server = uvicorn.Server(uvicorn.Config(create_app(config), log_level="warning"))
    thread = threading.Thread(target=lambda: anyio.run(server.serve, [sock]), daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    try:
        yield config.url
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def envelopes(count: int) -> list[str]:
    """``count`` envelopes of a long session, as JSON text."""
    base = {"agent": "acp:bench", "session_id": "s"}
    output = "\n".join(f"line {n}: " + "x" * 60 for n in range(30))
    diff = "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-old = 1\n+new = 2\n keep = 3"
    events: list[dict[str, Any]] = []
    turn = 0
    while len(events) < count:
        turn += 1
        events.append({"type": "user_message", "text": f"Step {turn}: change app.py"})
        events += [{"type": "thought_delta", "text": f"thinking {n} "} for n in range(5)]
        events += [{"type": "message_delta", "text": f"word{n} "} for n in range(20)]
        events.append({"type": "plan_updated", "entries": [
            {"content": f"step {n}", "status": "completed" if n < turn % 5 else "pending",
             "priority": "medium"} for n in range(5)]})  # fmt: skip
        for call in range(2):
            call_id = f"c{turn}-{call}"
            events.append({"type": "tool_call_started", "call_id": call_id, "name": "replace",
                           "kind": "edit", "title": "app.py", "input": {"file_path": "app.py"},
                           "locations": [{"path": "/w/app.py", "line": 1}],
                           "mcp_server": None, "mcp_tool": None})  # fmt: skip
            events.append({"type": "tool_call_updated", "call_id": call_id,
                           "status": "in_progress", "content": "working"})  # fmt: skip
            events.append({"type": "tool_call_finished", "call_id": call_id,
                           "status": "completed", "output": output, "error": None,
                           "diff": diff})  # fmt: skip
            events.append({"type": "file_changed", "path": "/w/app.py", "change": "modified",
                           "call_id": call_id, "derived": False})  # fmt: skip
        events.append({"type": "turn_completed", "ok": True, "stop_reason": "end_turn",
                       "error": None, "answer": "", "usage": None, "duration_ms": 1200})  # fmt: skip
    return [
        json.dumps({"seq": seq, "event": {**base, **event}})
        for seq, event in enumerate(events[:count], 1)
    ]


FIRST_SCREEN = """async ([lines, parseOnly]) => {
    const R = await import('/static/js/render.js');
    document.body.replaceChildren();
    const started = performance.now();
    const conversation = parseOnly ? null : new R.Conversation();
    if (conversation) document.body.append(conversation.el);
    for (const line of lines) {
        const envelope = JSON.parse(line);
        if (conversation) conversation.add(envelope.event, false);
    }
    document.body.offsetHeight;  // layout now
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    return performance.now() - started;
}"""

STREAM = """async ([rate, seconds]) => {
    const R = await import('/static/js/render.js');
    const conversation = new R.Conversation();
    document.body.replaceChildren(conversation.el);
    const total = rate * seconds;
    let sent = 0, busy = 0;
    // The page draws the answer as Markdown in a frame of its own: that time counts too.
    const flush = conversation.flush.bind(conversation);
    conversation.flush = (all) => {
        const t0 = performance.now();
        flush(all);
        busy += performance.now() - t0;
    };
    const start = performance.now();
    await new Promise((done) => {
        const frame = (now) => {
            const due = Math.min(total, Math.floor((now - start) / 1000 * rate));
            const t0 = performance.now();
            for (; sent < due; sent++) {
                conversation.add({type: 'message_delta', agent: 'acp:bench', text: `w${sent} `}, true);
            }
            document.body.offsetHeight;
            busy += performance.now() - t0;
            if (sent < total) requestAnimationFrame(frame); else done();
        };
        requestAnimationFrame(frame);
    });
    const elapsed = performance.now() - start;
    return {busy, elapsed, behind_ms: Math.max(0, elapsed - seconds * 1000)};
}"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lines = envelopes(args.events)
    with tempfile.TemporaryDirectory() as root, serving(root) as origin, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        name, value = login_cookie(origin)
        page.context.add_cookies([{"name": name, "value": value, "url": origin}])
        page.goto(f"{origin}/static/js/render.js")
        parse = min(page.evaluate(FIRST_SCREEN, [lines, True]) for _ in range(args.repeat))
        render = min(page.evaluate(FIRST_SCREEN, [lines, False]) for _ in range(args.repeat))
        stream = page.evaluate(STREAM, [args.rate, args.seconds])
        browser.close()
    print(f"first screen of {args.events} events: {render:.0f} ms "
          f"(JSON.parse alone {parse:.0f} ms, {render / parse:.1f}x)")  # fmt: skip
    share = stream["busy"] / stream["elapsed"]
    print(f"streaming {args.rate} deltas/s for {args.seconds} s: renderer {share:.1%} of the "
          f"main thread, {stream['behind_ms']:.0f} ms behind at the end")  # fmt: skip


if __name__ == "__main__":
    main()
