"""`--redact`: API keys, tokens, e-mail addresses and the home folder taken out of an export,
by the rules docs/sessions.md lists; in every export format, of every agent's sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from gemwire.cli import main
from gemwire.events import ToolCallStarted
from gemwire.sessions import Redactor
from gemwire.sessions._redact import RULES
from gemwire.sessions.claude import project_slug

REDACT = Redactor(home="/home/ann")


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("key sk-ant-api03-abcdefghijklmnopqrstuv ok", "key [API key] ok"),
        ("AIza" + "B" * 35, "[API key]"),
        ("token ghp_" + "a" * 36, "token [API key]"),
        ("github_pat_" + "A1_" * 10, "[API key]"),
        ("AKIAABCDEFGHIJKLMNOP", "[API key]"),
        ("export ANTHROPIC_API_KEY=abc123def456", "export ANTHROPIC_API_KEY=[secret]"),
        ('{"password": "hunter22"}', '{"password": "[secret]"}'),
        ("Authorization: Bearer abcdef0123456789", "Authorization: Bearer [token]"),
        ("eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK", "[token]"),
        ("mail ann.lee+x@mail.example.co.uk now", "mail [e-mail] now"),
        ("/home/ann/app and /home/ann", "~/app and ~"),
        ("/home/anne /x/home/ann <b>/home/ann</b>", "/home/anne /x/home/ann <b>~</b>"),
        ("max_tokens: 4096, sk-short, a@b", "max_tokens: 4096, sk-short, a@b"),
    ],
)
def test_each_rule(text: str, redacted: str) -> None:
    assert REDACT.text(text) == redacted


def test_an_event_is_redacted_in_every_text() -> None:
    call = ToolCallStarted(
        agent="claude",
        session_id="s",
        call_id="c",
        name="Bash",
        kind="execute",
        title="mail ann@example.com",
        input={"command": "cat /home/ann/.env", "env": ["TOKEN=abcdefghij"]},
    )
    assert REDACT.event(call) == ToolCallStarted(
        agent="claude",
        session_id="s",
        call_id="c",
        name="Bash",
        kind="execute",
        title="mail [e-mail]",
        input={"command": "cat ~/.env", "env": ["TOKEN=[secret]"]},
    )


@given(st.text(max_size=80))
def test_redacting_twice_changes_nothing_more_and_leaves_no_match(text: str) -> None:
    once = REDACT.text(text)
    assert REDACT.text(once) == once
    assert not any(pattern.search(once) for _, pattern, _ in RULES[1:])


def test_export_redact_in_every_format(tmp_path: Path) -> None:
    """A Claude session whose prompt holds a key, an address and a home path."""
    workspace = tmp_path / "w"
    folder = tmp_path / ".claude" / "projects" / project_slug(str(workspace))
    folder.mkdir(parents=True)
    prompt = f"use sk-proj-{'x' * 30} for ann@example.com in {Path.home()}/notes"
    record = {
        "type": "user",
        "sessionId": "s1",
        "cwd": str(workspace),
        "timestamp": "2026-11-25T10:00:00Z",
        "message": {"role": "user", "content": prompt},
    }
    (folder / "s1.jsonl").write_text(json.dumps(record) + "\n")
    runner = CliRunner(env={"CLAUDE_CONFIG_DIR": str(tmp_path / ".claude")})
    where = ["latest", "--agent", "claude", "--project", str(workspace)]
    for fmt in ("events", "markdown", "html"):
        plain = runner.invoke(main, ["sessions", "export", *where, "--format", fmt])
        shared = runner.invoke(main, ["sessions", "export", *where, "--format", fmt, "--redact"])
        assert (plain.exit_code, shared.exit_code) == (0, 0), shared.stderr
        assert "ann@example.com" in plain.stdout
        assert "ann@example.com" not in shared.stdout
        assert "sk-proj-" not in shared.stdout
        assert f"{Path.home()}/notes" not in shared.stdout
        assert "use [API key] for [e-mail] in ~/notes" in shared.stdout
    events = runner.invoke(main, ["sessions", "export", *where, "--redact"]).stdout
    user = [json.loads(line) for line in events.splitlines()][1]
    assert (user["type"], user["text"]) == ("user_message", "use [API key] for [e-mail] in ~/notes")
