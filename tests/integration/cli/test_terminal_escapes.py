"""Every command that prints session- or config-derived text, on a hostile home: what reaches a
person never drives the terminal (no ESC, C1, BEL or bidi control), and ``--json`` stays the
exact text."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
import threading
import tty
from collections.abc import Callable
from pathlib import Path

import pyte
import pytest
from click.testing import CliRunner
from kit.corpus import RECORDED

from gemwire.cli import main
from gemwire.cli.safe_text import terminal_safe

# Retitle the window, clear the screen, write the clipboard (OSC 52), ask for the cursor
# position with an 8-bit CSI, reverse the text that follows.
PAYLOAD = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;b3duZWQ=\x07\x9b6n\u202e!"
SHOWN = terminal_safe(PAYLOAD)  # what a person sees of it: '\\x9b6n\\u202e!'
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SESSION_ID = "sid" + PAYLOAD


def _record(**fields: object) -> str:
    return json.dumps(fields) + "\n"


class Hostile:
    """A Gemini home, a project, a price file and a config file full of escape sequences."""

    def __init__(self, root: Path) -> None:
        self.workspace = root / f"work{PAYLOAD}"
        self.workspace.mkdir()
        self.home = root / "home"
        project = self.home / ".gemini" / "tmp" / "work"
        chats = project / "chats"
        chats.mkdir(parents=True)
        (project / ".project_root").write_text(str(self.workspace))
        self.session = chats / f"session-2026-11-20T10-00{PAYLOAD}-0a1b2c3d.jsonl"
        self.session.write_text(
            _record(
                sessionId=SESSION_ID,
                projectHash="h",
                startTime="2026-11-20T10:00:00Z",
                lastUpdated="2026-11-20T10:00:09Z" + PAYLOAD,
                summary="summary" + PAYLOAD,
            )
            + _record(
                id="u1", timestamp="2026-11-20T10:00:00Z", type="user", content="ask" + PAYLOAD
            )
            + _record(
                id="g1",
                timestamp="2026-11-20T10:00:01Z",
                type="gemini",
                content="answer" + PAYLOAD,
                model="model" + PAYLOAD,
                thoughts=[{"subject": "plan" + PAYLOAD, "description": "d" + PAYLOAD}],
                tokens={"input": 10, "output": 5, "cached": 0, "total": 15},
                toolCalls=[
                    {
                        "id": "call-1",
                        "name": "run_shell_command",
                        "displayName": "Shell" + PAYLOAD,
                        "description": "ls" + PAYLOAD,
                        "args": {"command": "ls" + PAYLOAD},
                        "status": "success",
                        "timestamp": "2026-11-20T10:00:01Z",
                        "result": [
                            {
                                "functionResponse": {
                                    "id": "call-1",
                                    "name": "run_shell_command",
                                    "response": {"output": "out" + PAYLOAD},
                                }
                            }
                        ],
                    }
                ],
            )
        )
        self.not_a_session = chats / f"session-x{PAYLOAD}-1a1b2c3d.jsonl"
        self.not_a_session.write_text("not json" + PAYLOAD + "\n")
        self.prices = root / f"prices{PAYLOAD}.json"
        self.prices.write_text(json.dumps({"as_of": "2026" + PAYLOAD, "models": {}}))
        folder = root / f"config{PAYLOAD}"
        folder.mkdir()
        self.config = folder / "config.toml"
        self.config.write_text(
            f"model = {json.dumps(PAYLOAD)}\ninclude_directories = [{json.dumps(PAYLOAD)}]\n"
        )

    @property
    def where(self) -> list[str]:
        return ["--gemini-home", str(self.home), "--project", str(self.workspace)]

    def run(self, *args: str) -> tuple[int, str, str]:
        environ = {"GEMWIRE_CONFIG": str(self.config), "TZ": "UTC", "GEMWIRE_MODEL": None}
        result = CliRunner().invoke(main, list(args), env=environ)
        return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


def assert_safe(text: str) -> None:
    found = UNSAFE.search(text)
    assert found is None, f"{found.group()!r} reaches the terminal in {text!r}"


def human_commands(h: Hostile) -> list[list[str]]:
    usage = ["usage", "--gemini-home", str(h.home), "--prices", str(h.prices)]
    return [
        ["sessions", "list", *h.where],
        ["sessions", "list", "--all-projects", "--gemini-home", str(h.home)],
        ["sessions", "show", "1", *h.where],
        ["sessions", "show", "1", "--verbose", *h.where],
        ["sessions", "show", "1", "--quiet", *h.where],
        ["sessions", "show", str(h.session), *h.where],
        *([*usage, "--by", by] for by in ("day", "model", "project", "session")),
        ["config", "get", "model"],
        ["config", "get", "include_directories"],
        ["config", "list"],
        ["config", "path"],
    ]


def test_what_a_person_sees_never_drives_the_terminal(hostile: Hostile) -> None:
    for command in human_commands(hostile):
        code, out, err = hostile.run(*command)
        assert code == 0, (command, err)
        assert_safe(out)
        assert_safe(err)
        if "--quiet" not in command:  # (nothing to show: the session ends with no turn)
            assert SHOWN in out, command  # the hostile text is there, made visible


def test_config_values_are_shown_made_safe(hostile: Hostile) -> None:
    assert hostile.run("config", "get", "model") == (0, f"{SHOWN}\n", "")
    assert hostile.run("config", "get", "include_directories") == (0, f"{SHOWN}\n", "")
    assert hostile.run("config", "path") == (0, f"{terminal_safe(str(hostile.config))}\n", "")


def test_errors_that_name_hostile_files_are_safe(hostile: Hostile) -> None:
    for command in ("show", "export"):
        code, out, err = hostile.run(
            "sessions", command, str(hostile.not_a_session), *hostile.where
        )
        assert (code, out) == (1, "")
        assert err.startswith(f"Error: {terminal_safe(str(hostile.not_a_session))} is not a")
        assert_safe(err)


def test_json_stays_the_exact_text(hostile: Hostile) -> None:
    code, out, _ = hostile.run("sessions", "list", "--json", *hostile.where)
    assert code == 0
    assert [json.loads(line)["id"] for line in out.splitlines()] == [SESSION_ID]
    code, out, _ = hostile.run("sessions", "show", "1", "--json", *hostile.where)
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["text"] for e in events if e["type"] == "user_message"] == ["ask" + PAYLOAD]
    code, out, _ = hostile.run(
        "usage", "--gemini-home", str(hostile.home), "--by", "model", "--json"
    )
    assert [row["key"] for row in json.loads(out)["rows"]] == ["model" + PAYLOAD]
    # Written to a file (not a terminal), an export is exactly what the session says.
    code, out, _ = hostile.run("sessions", "export", "1", *hostile.where)
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["text"] for e in events if e["type"] == "message_delta"] == ["answer" + PAYLOAD]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in _strings(item)] if isinstance(value, list) else []


def _read_all(fd: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # EIO: every writer is gone
            return
        if not chunk:
            return
        into += chunk


def on_terminal(run: Callable[[str], int]) -> tuple[int, str]:
    """``run(path)`` with ``path`` a pseudo-terminal: (its exit code, what it showed there)."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no \n -> \r\n: the bytes as written
    shown = bytearray()
    reader = threading.Thread(target=_read_all, args=(master, shown))
    reader.start()
    try:
        code = run(os.ttyname(slave))
    finally:
        os.close(slave)
        reader.join(timeout=30)
        os.close(master)
    return code, shown.decode()


@pytest.mark.parametrize("fmt", ["events", "claude", "html", "markdown"])
def test_an_export_to_a_terminal_never_drives_it(hostile: Hostile, fmt: str) -> None:
    def export(path: str) -> int:
        args = ["sessions", "export", "1", "--format", fmt, "-o", path, *hostile.where]
        return hostile.run(*args)[0]

    code, shown = on_terminal(export)
    assert code == 0
    assert_safe(shown)
    if fmt in ("events", "claude"):  # still JSON, with the same values
        values = [text for line in shown.splitlines() for text in _strings(json.loads(line))]
        assert "answer" + PAYLOAD in values
    else:
        assert "answer" + SHOWN in shown


def test_an_export_to_stdout_on_a_terminal_never_drives_it(hostile: Hostile) -> None:
    def export(path: str) -> int:
        with open(path, "wb") as terminal:
            return subprocess.run(
                [sys.executable, "-m", "gemwire", "sessions", "export", "1", *hostile.where],
                stdout=terminal,
                env={**os.environ, "GEMWIRE_CONFIG": "/nonexistent/config.toml"},
                timeout=60,
                check=False,
            ).returncode

    code, shown = on_terminal(export)
    assert code == 0
    assert_safe(shown)
    events = [json.loads(line) for line in shown.splitlines()]
    assert [e["text"] for e in events if e["type"] == "message_delta"] == ["answer" + PAYLOAD]


def screen_of(argv: list[str], columns: int) -> list[str]:
    """The non-blank lines a terminal ``columns`` wide shows after ``gemwire argv`` ran in it."""

    def run(path: str) -> int:
        with open(path, "r+b", buffering=0) as terminal:
            fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
            return subprocess.run(
                [sys.executable, "-m", "gemwire", *argv],
                stdin=terminal,
                stdout=terminal,
                stderr=terminal,
                env={**os.environ, "GEMWIRE_CONFIG": "/nonexistent.toml", "TERM": "xterm"},
                timeout=60,
                check=False,
            ).returncode

    code, shown = on_terminal(run)
    assert code == 0
    screen = pyte.Screen(columns, 60)
    screen.set_mode(pyte.modes.LNM)  # the terminal is raw: a newline also returns
    pyte.Stream(screen).feed(shown)
    assert screen.title == ""  # no session's OSC 0 reached the terminal
    return [line.rstrip() for line in screen.display if line.strip()]


def test_show_on_a_terminal_writes_its_header_above_the_view(hostile: Hostile) -> None:
    lines = screen_of(["sessions", "show", "1", *hostile.where], 400)
    assert lines[:3] == [
        f"# {terminal_safe(str(hostile.session))}",
        f"gemini · session {terminal_safe(SESSION_ID)}",
        f"> ask{SHOWN}",
    ]


@pytest.mark.parametrize("columns", [80, 120])
def test_show_on_a_terminal_heads_each_subagent(tmp_path: Path, columns: int) -> None:
    recording = RECORDED / "session_subagent" / "json" / "gemini-home"
    workspace = tmp_path / "w"
    target = tmp_path / "home" / ".gemini"
    shutil.copytree(recording, target)
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_text().replace("__WORKSPACE__", str(workspace))
            path.write_text(text.replace("__HOME__", str(tmp_path / "home")))
    where = ["--gemini-home", str(tmp_path / "home"), "--project", str(workspace)]
    lines = screen_of(["sessions", "show", "1", *where], columns)
    heading = "# subagent 26e56bb0-ed15-43f8-ba9f-280dbc768ab1 (call "
    assert [line[: len(heading)] for line in lines if line.startswith("# ")][1:] == [heading]
    at = next(n for n, line in enumerate(lines) if line.startswith(heading))
    assert lines[at - 1 : at] == ["Let me ask the investigator."]
    assert "gemini · session 26e56bb0-ed15-43f8-ba9f-280dbc768ab1" in lines[at + 1 : at + 3]
    assert not [line for line in lines if "starting" in line or "working" in line]
