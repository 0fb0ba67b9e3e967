"""The elicitation prompt of ``gemwire acp``: keys in, the exact answer out."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable

import pytest
from rich.console import Console

from gemwire.cli.elicitation import ElicitationPrompt
from gemwire.runners.acp import ElicitationAnswer, ElicitationRequest

pytestmark = pytest.mark.anyio

FORM = ElicitationRequest(
    request_id="1",
    session_id="s",
    mode="form",
    message="Deploy \x1b[31mwhere\x1b[0m?",
    fields={
        "region": {"type": "string", "enum": ["eu", "us"]},
        "replicas": {"type": "integer", "title": "Replicas"},
        "note": {"type": "string"},
    },
    required=["region", "replicas"],
)
URL = ElicitationRequest(
    request_id="2", session_id="s", mode="url", message="Sign in", url="https://x.test/a"
)


def keys(typed: str) -> Callable[[], Awaitable[str]]:
    pressed = iter(typed)

    async def read() -> str:
        return next(pressed, "")

    return read


async def answer(request: ElicitationRequest, typed: str) -> tuple[ElicitationAnswer, str]:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    got = await ElicitationPrompt(console, read_key=keys(typed))("acp:codex-acp", request)
    return got, out.getvalue()


async def test_a_form_is_filled_in_field_by_field_and_bad_values_asked_again() -> None:
    got, shown = await answer(FORM, "yfr\x7f\x7feu\r3x\x7f\r\r")
    assert got == ElicitationAnswer(action="accept", content={"region": "eu", "replicas": 3})
    assert "? acp:codex-acp asks: Deploy" in shown
    assert "\x1b[31m" not in shown  # the agent's escapes are not the terminal's
    assert shown.count("Replicas (integer): ") == 1
    assert "note (string, Enter skips): " in shown


async def test_an_invalid_answer_is_asked_again() -> None:
    got, shown = await answer(FORM, "ymars\reu\rmany\r2\r\r")
    assert got == ElicitationAnswer(action="accept", content={"region": "eu", "replicas": 2})
    assert shown.count("not a valid answer") == 2


@pytest.mark.parametrize(
    ("typed", "action"),
    [("n", "decline"), ("\x1b", "cancel"), ("", "cancel"), ("zy\x1b", "cancel")],
)
async def test_declining_and_cancelling(typed: str, action: str) -> None:
    got, _ = await answer(FORM, typed)
    assert got == ElicitationAnswer(action=action)  # type: ignore[arg-type]


async def test_a_url_is_shown_and_y_says_it_is_done() -> None:
    got, shown = await answer(URL, "y")
    assert got == ElicitationAnswer(action="accept")
    assert "open https://x.test/a" in shown
