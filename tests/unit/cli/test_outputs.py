"""Which output a command gets, and what the non-live ones print."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from kit.corpus import RECORDED
from rich.console import Console

from gemwire.cli import main
from gemwire.cli.live import JsonOutput, QuietOutput, wants_live_view
from gemwire.cli.permission import PermissionPrompt, choose
from gemwire.events import (
    MessageDelta,
    PermissionOption,
    PermissionRequested,
    TurnCompleted,
    TurnError,
    decode_event,
    encode_event,
)

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stream", "environ", "live"),
    [
        (Terminal(), {"TERM": "xterm"}, True),
        (Terminal(), {"TERM": "xterm", "NO_COLOR": "1"}, False),
        (Terminal(), {"TERM": "xterm", "NO_COLOR": ""}, True),  # the spec: set and not empty
        (Terminal(), {"TERM": "dumb"}, False),
        (io.StringIO(), {"TERM": "xterm"}, False),
    ],
)
def test_the_live_view_needs_a_terminal_that_wants_colour(
    stream: io.StringIO, environ: dict[str, str], live: bool
) -> None:
    assert wants_live_view(stream, environ) is live


def test_quiet_prints_only_the_answer_and_the_error_on_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    quiet = QuietOutput(out, err)
    with quiet:
        quiet.show(MessageDelta(agent="gemini", text="part"))
        quiet.show(
            TurnCompleted(
                agent="gemini",
                ok=False,
                stop_reason="error",
                answer="partial answer",
                error=TurnError(kind="rate_limited", message="429"),
            )
        )
        quiet.close("gemini --resume s1")
    assert (out.getvalue(), err.getvalue()) == ("partial answer\n", "gemwire: rate_limited: 429\n")


def test_json_lines_round_trip() -> None:
    buffer = io.BytesIO()
    event = MessageDelta(agent="gemini", session_id="s", text="hi")
    JsonOutput(buffer).show(event)
    assert decode_event(buffer.getvalue()) == event


class CountingWrites(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: ReadableBuffer, /) -> int:
        self.writes += 1
        return super().write(data)


def test_a_batch_of_events_is_one_write_of_the_same_json_lines() -> None:
    events = [MessageDelta(agent="gemini", session_id="s", text=t) for t in ("a", "b\n", "c")]
    one_by_one, batched = io.BytesIO(), CountingWrites()
    for event in events:
        JsonOutput(one_by_one).show(event)
    JsonOutput(batched).show_all(events)
    assert batched.getvalue() == one_by_one.getvalue() == b"".join(map(encode_event, events))
    assert batched.writes == 1


def test_replay_quiet_and_verbose_through_the_command() -> None:
    run = str(RECORDED / "write_and_shell/stream-json/run-1.stdout")
    result = CliRunner().invoke(main, ["replay", "-q", run])
    assert (result.exit_code, result.stdout) == (0, "I'll write the file.\n\nDone. File written.\n")
    result = CliRunner().invoke(main, ["replay", "--json", "-q", run])
    assert result.stdout.startswith('{"type":"session_started"')  # --json wins


OPTIONS = [
    PermissionOption(option_id="proceed_always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="proceed_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="cancel", name="Reject", kind="reject_once"),
]


@pytest.mark.parametrize(
    ("key", "meaning"),
    [
        ("1", (True, "proceed_always")),
        ("3", (True, "cancel")),
        ("4", (False, None)),
        ("0", (False, None)),
        ("y", (True, "proceed_once")),  # once before always
        ("a", (True, "proceed_always")),
        ("n", (True, "cancel")),
        ("r", (False, None)),  # no reject_always offered: nothing invented
        ("x", (False, None)),
        ("\x1b", (True, None)),
        ("\x03", (True, None)),
        ("", (True, None)),  # end of input
    ],
)
def test_keys_pick_only_offered_options(key: str, meaning: tuple[bool, str | None]) -> None:
    assert choose(OPTIONS, key) == meaning


@pytest.mark.anyio
async def test_the_prompt_asks_until_a_key_means_something() -> None:
    out = io.StringIO()
    keys = iter(["?", "9", "2"])

    async def read_key() -> str:
        return next(keys)

    prompt = PermissionPrompt(Console(file=out, width=80, color_system=None), read_key=read_key)
    request = PermissionRequested(agent="gemini", request_id="r1", call_id="c1", options=OPTIONS)
    assert await prompt(request, title="rm -rf build") == "proceed_once"
    assert out.getvalue() == (
        "? gemini asks permission for rm -rf build\n"
        "  1 Allow always   2 Allow once   3 Reject\n"
        "  1-3, y/n, Esc cancels: Allow once\n"
    )


@pytest.mark.anyio
async def test_without_a_terminal_nobody_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("1"))
    prompt = PermissionPrompt(Console(file=io.StringIO()))
    request = PermissionRequested(agent="gemini", request_id="r1", options=OPTIONS)
    assert await prompt(request) is None
