#!/usr/bin/env python3
"""A hostile agent for ``gemwire eval --sandbox``'s tests, run as the Gemini CLI executable.

It tries what an agent gaming an eval would, notes in its workspace's ``probes.json`` what
each try got (``"blocked: ..."`` or what it read), solves the task (``answer`` = 42), and
prints a turn Gemini CLI 0.61.0 recorded (tests/fixtures), so gemwire sees a good turn.
What to try comes from ``PROBE_*`` variables (paths, ports); standard library only.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

RECORDED = (
    Path(__file__).resolve().parents[1]
    / "fixtures/gemini/0.61.0/plain_answer/stream-json/run-1.stdout"
)


def attempt(action: object) -> str:
    try:
        got = action() if callable(action) else action
    except OSError as exc:
        return f"blocked: {type(exc).__name__}"
    return f"got: {str(got)[:200]}"


def write(path: str) -> str:
    Path(path).write_text("escaped")
    return "wrote"


def connect(port: int) -> str:
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    return "connected"


def model(port: int) -> str:
    # Any HTTP answer (the scripted model says 404 to a GET of /) means it was reached.
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
    except urllib.error.HTTPError as exc:
        return f"http {exc.code}"
    return "http 200"


def allocate(size: int) -> str:
    try:
        bytearray(size)
    except MemoryError:
        return "blocked: MemoryError"
    return "allocated"


def plant(link: str, target: str) -> str:
    os.symlink(target, link)
    return "planted"


def probes() -> dict[str, object]:
    """Every try, and what it got."""
    env = os.environ
    return {
        "read": {p: attempt(lambda p=p: Path(p).read_text()) for p in env["PROBE_READ"].split(":")},
        "list": {
            p: attempt(lambda p=p: sorted(os.listdir(p))) for p in env["PROBE_LIST"].split(":")
        },
        "write": {p: attempt(lambda p=p: write(p)) for p in env["PROBE_WRITE"].split(":")},
        "symlink_write": attempt(
            lambda: plant("escape", env["PROBE_SYMLINK_TO"]) and write(f"escape/{env['PROBE_TAG']}")
        ),
        "plant": attempt(lambda: plant(env["PROBE_PLANT"], env["PROBE_VICTIM"])),
        "connect": attempt(lambda: connect(int(env["PROBE_PORT"]))),
        "resolve": attempt(lambda: socket.getaddrinfo("example.com", 443)),
        "model": attempt(lambda: model(int(env["PROBE_MODEL_PORT"]))),
        "home": env.get("HOME"),
        "memory": allocate(int(env["PROBE_ALLOCATE"])),
        "daemon": attempt(
            lambda: (
                subprocess.Popen(
                    ["sleep", "300"], start_new_session=True, env={"PROBE_TAG": env["PROBE_TAG"]}
                ).pid
            )
        ),
    }


def main() -> None:
    if "--version" in sys.argv:
        print("0.61.0")
        return
    Path("probes.json").write_text(json.dumps(probes(), indent=1))
    Path("answer").write_text("42")
    sys.stdout.write(RECORDED.read_text())


if __name__ == "__main__":
    main()
