"""The web page's Sessions view in chromium: the first page of a 10,000-session home.

    .venv/bin/python bench/web_sessions.py [--sessions 10000] [--repeat 5]

The home is made as bench/sessions.py makes it (``--sessions`` copies of the sessions Gemini
CLI 0.61.0 recorded, in one project, each with its own id and time), in a temporary folder;
gemwire's cache (the listing index) goes there too. The real app serves it (``create_app`` on
uvicorn, 127.0.0.1, a free port, ``sessions_home`` the generated home); Playwright drives
Debian's chromium (``make browser``).

Timed: from ``#/sessions`` to its first page of sessions drawn (the table's rows, laid out),
cold (the first visit: the server reads every file and writes the listing index) and warm
(best of ``--repeat`` visits, the index up to date); and the bytes of the listing request the
page made. Baseline in the same run: ``GET /v1/saved-sessions`` of every session at once (what
the page downloaded before it asked for a page), timed from the page with ``fetch``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

# Beside this file (a script's folder is first on the path): bench/sessions.py's home, and
# bench/web_render.py's server.
from sessions import make_home
from web_render import login_cookie, serving

FIRST_PAGE = """async () => {
    const started = performance.now();
    location.hash = '#/sessions';
    await new Promise((done) => {
        const look = () => document.querySelector('table.sessions tbody tr')
            ? done() : requestAnimationFrame(look);
        look();
    });
    document.body.offsetHeight;  // layout now
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    return performance.now() - started;
}"""

EVERY = """async () => {
    const started = performance.now();
    const body = await (await fetch('/v1/saved-sessions')).text();
    JSON.parse(body);
    return [performance.now() - started, body.length];
}"""


def visit(page: Page, origin: str) -> float:
    """One visit of the Sessions view from another view; its milliseconds."""
    page.goto(f"{origin}/#/usage")
    page.wait_for_selector(".report")
    ms: float = page.evaluate(FIRST_PAGE)
    return ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        make_home(home, args.sessions)
        os.environ["XDG_CACHE_HOME"] = f"{folder}/cache"  # the listing index, not ~/.cache
        root = Path(folder) / "root"
        root.mkdir()
        with serving(str(root), sessions_home=str(home)) as origin, sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            name, value = login_cookie(origin)
            page.context.add_cookies([{"name": name, "value": value, "url": origin}])
            sizes: list[int] = []

            def listed(response: Any) -> None:
                if "/v1/saved-sessions?" in response.url:
                    sizes.append(len(response.body()))

            page.on("response", listed)
            page.goto(f"{origin}/#/chat")
            cold = page.evaluate(FIRST_PAGE)
            rows = page.locator("table.sessions tbody tr").count()
            warm = min(visit(page, origin) for _ in range(args.repeat))
            every, every_bytes = min(page.evaluate(EVERY) for _ in range(args.repeat))
            browser.close()
    print(f"{args.sessions} sessions, the first page ({rows} rows) in chromium: "
          f"cold {cold:.0f} ms, warm {warm:.0f} ms (best of {args.repeat}); "
          f"the page's listing request {max(sizes) / 1e3:.1f} kB")  # fmt: skip
    print(f"baseline: every session at once (GET /v1/saved-sessions, fetch and JSON.parse): "
          f"{every:.0f} ms, {every_bytes / 1e6:.1f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
