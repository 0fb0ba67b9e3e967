"""Text from a stream, a session or an agent never drives the terminal (``--json`` stays exact)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from rich.console import Console

from gemwire.cli import main
from gemwire.cli.live import LiveOutput
from gemwire.cli.safe_text import terminal_safe, terminal_safe_event
from gemwire.cli.view import View
from gemwire.events import (
    Notice,
    PermissionOption,
    PermissionRequested,
    ToolCallStarted,
    TurnCompleted,
    TurnError,
)

CLEAR, TITLE, BIDI = "\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\u202e"
HOSTILE = f"{CLEAR}{TITLE}a{BIDI}b\x9b31m\x07"


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("plain\ttext\nnext", "plain\ttext\nnext"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]8;;https://e.test\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b(Bcharset", "charset"),
        ("lone \x1b", "lone \\x1b"),
        ("crlf\r\nline", "crlf\nline"),
        ("over\rwrite", "over\\x0dwrite"),
        ("bell\x07 nul\x00 del\x7f c1\x9b", "bell\\x07 nul\\x00 del\\x7f c1\\x9b"),
        ("a\u202eb\u2066c", "a\\u202eb\\u2066c"),
        ("name\udcff.jsonl", "name\ufffd.jsonl"),
        (HOSTILE, "a\\u202eb\\x9b31m\\x07"),
    ],
)
def test_terminal_safe(text: str, safe: str) -> None:
    assert terminal_safe(text) == safe


def test_clean_text_is_the_same_object() -> None:
    text = "nothing to do here"
    event = Notice(agent="gemini", severity="info", message=text, source="upstream")
    assert terminal_safe(text) is text
    assert terminal_safe_event(event) is event


def test_every_text_field_of_an_event_is_made_safe_and_payloads_are_not() -> None:
    started = ToolCallStarted(
        agent="gemini",
        call_id="c1",
        name=f"x{CLEAR}",
        kind="other",
        title=HOSTILE,
        input={"command": CLEAR},
    )
    assert terminal_safe_event(started) == ToolCallStarted(
        agent="gemini",
        call_id="c1",
        name="x",
        kind="other",
        title="a\\u202eb\\x9b31m\\x07",
        input={"command": CLEAR},
    )
    turn = TurnCompleted(
        agent="gemini",
        ok=False,
        stop_reason="error",
        answer=TITLE,
        error=TurnError(kind="agent", message=f"boom{CLEAR}"),
    )
    safe = terminal_safe_event(turn)
    assert (safe.answer, safe.error) == ("", TurnError(kind="agent", message="boom"))


def _stream() -> bytes:
    def line(**fields: object) -> bytes:
        return json.dumps(fields).encode() + b"\n"

    return b"".join(
        [
            line(type="init", timestamp="t", session_id=f"s{TITLE}", model="auto"),
            line(type="message", timestamp="t", role="assistant", content=f"hi{HOSTILE}"),
            line(
                type="tool_use",
                timestamp="t",
                tool_name="run_shell_command",
                tool_id="c1",
                parameters={"command": f"ls{CLEAR}"},
            ),
            line(type="tool_result", timestamp="t", tool_id="c1", status="success", output=HOSTILE),
            f"noise {CLEAR}\n".encode(),
            line(type="zz", x=TITLE),
            line(type="error", timestamp="t", severity="warning", message=HOSTILE),
            line(type="result", timestamp="t", status="success"),
        ]
    )


def _assert_inert(out: str) -> None:
    for sequence in ("\x1b[2J", "\x1b[H", "\x1b]", "\x07", "\x9b", BIDI):
        assert sequence not in out


def test_replay_transcript_is_inert_and_json_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(_stream())
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code == 0
    _assert_inert(result.stdout)
    assert "hia\\u202eb\\x9b31m\\x07" in result.stdout
    assert "noise " in result.stdout
    result = CliRunner().invoke(main, ["replay", "--json", str(path)])
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["session_id"] == f"s{TITLE}"
    assert events[1]["text"] == f"hi{HOSTILE}"


async def _key_one() -> str:
    return "1"


def test_the_live_view_is_inert_and_the_agent_gets_its_own_option_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gemwire import replay_gemini_stream

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=100)
    live = LiveOutput(console, View())
    with live:
        for event in replay_gemini_stream([_stream()]):
            live.show(event)
        monkeypatch.setattr("sys.stdin.isatty", lambda: True)
        monkeypatch.setattr("gemwire.cli.permission.read_key", _key_one)
        option = PermissionOption(
            option_id=f"allow{CLEAR}", name=f"Allow{TITLE}", kind="allow_once"
        )
        request = PermissionRequested(agent="gemini", request_id="r1", options=[option])
        assert anyio.run(live.ask_permission, request) == f"allow{CLEAR}"
        live.close(resume=f"gemini --resume s{TITLE}")
    _assert_inert(out.getvalue())
    assert "Allow" in out.getvalue()


def test_a_permission_requests_diff_and_title_are_shown_inert(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=100)
    live = LiveOutput(console, View())
    with live:
        monkeypatch.setattr("sys.stdin.isatty", lambda: True)
        monkeypatch.setattr("gemwire.cli.permission.read_key", _key_one)
        option = PermissionOption(option_id="yes", name="Allow", kind="allow_once")
        request = PermissionRequested(
            agent="acp:x",
            request_id="r1",
            options=[option],
            title=f"Edit{TITLE}",
            diff=f"--- a\n+++ a\n-old\n+new{HOSTILE}\n",
        )
        assert anyio.run(live.ask_permission, request) == "yes"
    _assert_inert(out.getvalue())
    assert "? acp:x asks permission for Edit" in out.getvalue()
    assert "    +newa\\u202eb\\x9b31m\\x07" in out.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("out", "answer"), [(io.StringIO(), HOSTILE), (_Terminal(), "a\\u202eb\\x9b31m\\x07")]
)
def test_quiet_is_exact_into_a_pipe_and_inert_on_a_terminal(out: io.StringIO, answer: str) -> None:
    from gemwire.cli.live import QuietOutput

    err = _Terminal()
    quiet = QuietOutput(out, err)
    error = TurnError(kind="agent", message=f"boom{CLEAR}")
    quiet.show(
        TurnCompleted(agent="gemini", ok=False, stop_reason="error", answer=HOSTILE, error=error)
    )
    quiet.close()
    assert out.getvalue() == answer + "\n"
    assert err.getvalue() == "gemwire: agent: boom\n"
