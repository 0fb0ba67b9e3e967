"""Exports mask the secret values of the environment they run in: a session where the model
ran ``env | grep _KEY`` and repeated a key exports with every key masked, in every format."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.sessions import to_html, to_markdown, to_unified_messages
from gemwire.sessions.gemini import load_session

KEY = "sk-ant-api03-FAKE0123456789abcdef"
TOKEN = "ghp_FAKE0123456789abcdefABCDEF"


def leaky_session(materialize: Any) -> Any:
    """A recorded run whose shell call printed two keys and whose answer repeats one."""
    run = materialize("0.61.0", "write_and_shell")
    [path] = run.session_files()
    printed = f"ANTHROPIC_API_KEY={KEY}\nGH_TOKEN={TOKEN}"
    text = path.read_text()
    text = text.replace("hi there\\noops", json.dumps(printed)[1:-1])
    text = text.replace("Done. File written.", f"Your key is {KEY}.")
    path.write_text(text)
    return run


def test_html_and_markdown_mask_the_secrets_given(materialize: Any) -> None:
    conversation = load_session(leaky_session(materialize).session_files()[0], keep_originals=True)
    unmasked = to_markdown(conversation, secrets=())
    assert KEY in unmasked  # the session does hold the keys
    assert TOKEN in unmasked
    for page in (
        to_html(conversation, secrets=[KEY, TOKEN]),
        to_markdown(conversation, secrets=[KEY, TOKEN]),
    ):
        assert KEY not in page
        assert TOKEN not in page
        assert "ANTHROPIC_API_KEY=***" in page
        assert "Your key is ***." in page
    messages = list(
        to_unified_messages(conversation.messages, conversation.originals, secrets=[KEY])
    )
    assert KEY not in json.dumps(messages)
    assert TOKEN in json.dumps(messages)  # only what was given


@pytest.mark.parametrize("fmt", ["html", "markdown", "claude", "events"])
def test_cli_export_masks_the_secrets_of_its_environment(materialize: Any, fmt: str) -> None:
    run = leaky_session(materialize)
    where = ["latest", "--gemini-home", str(run.home), "--project", str(run.workspace)]
    env = {"ANTHROPIC_API_KEY": KEY, "GH_TOKEN": TOKEN}
    result = CliRunner(env=env).invoke(main, ["sessions", "export", *where, "--format", fmt])
    assert result.exit_code == 0, result.output
    assert KEY not in result.stdout
    assert TOKEN not in result.stdout
    assert "Your key is ***." in result.stdout
    assert "ANTHROPIC_API_KEY=***" in result.stdout


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_cli_show_masks_the_secrets_of_its_environment(
    materialize: Any, json_flag: list[str]
) -> None:
    run = leaky_session(materialize)
    where = ["latest", "--gemini-home", str(run.home), "--project", str(run.workspace)]
    env = {"ANTHROPIC_API_KEY": KEY, "GH_TOKEN": TOKEN}
    result = CliRunner(env=env).invoke(main, ["sessions", "show", *where, *json_flag, "-v"])
    assert result.exit_code == 0, result.output
    assert KEY not in result.stdout
    assert TOKEN not in result.stdout
    assert "Your key is ***." in result.stdout
    assert "ANTHROPIC_API_KEY=***" in result.stdout
