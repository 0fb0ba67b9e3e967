"""The secrets gemwire knows and the masker: which values, where in an event, what it costs."""

from __future__ import annotations

import msgspec
from hypothesis import given, strategies as st

from gemwire._normalize.masking import (
    MIN_SECRET_CHARS,
    TEXT_FIELDS,
    Masker,
    is_secret_name,
    known_secrets,
)
from gemwire.events import (
    Event,
    MessageDelta,
    Notice,
    PlanEntry,
    PlanUpdated,
    SessionStarted,
    SessionUpdated,
    ToolCallFinished,
    ToolCallStarted,
    ToolError,
    TurnCompleted,
    TurnError,
    Unknown,
)
from gemwire.runners.agents import AGENTS

KEY = "sk-ant-api03-0123456789abcdef"
TOKEN = "ghp_0123456789abcdefABCDEF"


def test_secrets_are_the_values_of_secret_names_and_the_credentials() -> None:
    environment = {
        "ANTHROPIC_API_KEY": KEY,
        "GH_TOKEN": TOKEN,
        "DB_PASSWORD": "correct horse battery",
        "CLIENT_SECRET": "s3cr3t-value",
        "PATH": "/usr/bin:/bin",
        "TOKENIZERS_PARALLELISM": "false-but-long",
        "SHORT_TOKEN": "1234567",  # under MIN_SECRET_CHARS: not one
    }
    credentials = ["api-key-from-credentials", 42, None]
    assert known_secrets(environment, credentials) == {
        KEY,
        TOKEN,
        "correct horse battery",
        "s3cr3t-value",
        "api-key-from-credentials",
    }
    assert MIN_SECRET_CHARS == 8


def test_every_key_variable_of_the_pinned_agents_is_a_secret_name() -> None:
    names = {name for spec in AGENTS.values() for name in spec.auth_env}
    flags = {"GOOGLE_GENAI_USE_VERTEXAI"}  # says which auth to use; holds no secret
    assert {name for name in names if not is_secret_name(name)} == flags
    assert {"GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "DASHSCOPE_API_KEY"} <= names


def test_a_masker_without_secrets_is_false_and_returns_the_same_objects() -> None:
    masker = Masker()
    events: list[Event] = [MessageDelta(agent="gemini", text=KEY)]
    assert not masker
    assert masker.events(events) is events
    assert masker.data(events[0]) is events[0]
    assert repr(Masker([KEY])) == "Masker(1 secrets)"


def test_events_without_a_secret_come_back_as_the_same_list() -> None:
    events: list[Event] = [
        MessageDelta(agent="gemini", text="hello"),
        ToolCallStarted(agent="gemini", call_id="c", name="x", kind="other", title="t"),
    ]
    assert Masker([KEY]).events(events) is events


def test_every_text_field_of_an_event_is_masked_and_nothing_else() -> None:
    masker = Masker([KEY, TOKEN])
    started = ToolCallStarted(
        agent="gemini",
        session_id="s",
        call_id="c1",
        name="run_shell_command",
        kind="execute",
        title=f"curl -H 'x-api-key: {KEY}'",
        input={"command": f"echo {KEY}", "env": [f"GH_TOKEN={TOKEN}"], KEY: 1, "n": 3},
    )
    finished = ToolCallFinished(
        agent="gemini",
        call_id="c1",
        status="failed",
        output=f"ANTHROPIC_API_KEY={KEY}\nGH_TOKEN={TOKEN}\n",
        error=ToolError(type="shell", message=f"bad key {KEY}"),
        diff=f"+KEY={KEY}",
    )
    completed = TurnCompleted(
        agent="gemini",
        ok=False,
        stop_reason="error",
        answer=f"your key is {KEY}",
        error=TurnError(kind="agent", message=f"invalid key {KEY}", exit_code=1),
    )
    others: list[Event] = [
        Notice(agent="gemini", severity="warning", message=f"k={KEY}", source="stderr"),
        Unknown(agent="gemini", upstream_type="x", raw=f'{{"key":"{KEY}"}}'),
        SessionUpdated(agent="acp:a", update="u", data={"nested": [{"v": KEY}]}),
        PlanUpdated(agent="acp:a", entries=[PlanEntry(content=f"use {KEY}", status="pending")]),
    ]
    masked = masker.events([started, finished, completed, *others])
    assert masked == [
        msgspec.structs.replace(
            started,
            title="curl -H 'x-api-key: ***'",
            input={"command": "echo ***", "env": ["GH_TOKEN=***"], "***": 1, "n": 3},
        ),
        msgspec.structs.replace(
            finished,
            output="ANTHROPIC_API_KEY=***\nGH_TOKEN=***\n",
            error=ToolError(type="shell", message="bad key ***"),
            diff="+KEY=***",
        ),
        msgspec.structs.replace(
            completed,
            answer="your key is ***",
            error=TurnError(kind="agent", message="invalid key ***", exit_code=1),
        ),
        msgspec.structs.replace(others[0], message="k=***"),
        msgspec.structs.replace(others[1], raw='{"key":"***"}'),
        msgspec.structs.replace(others[2], data={"nested": [{"v": "***"}]}),
        PlanUpdated(agent="acp:a", entries=[PlanEntry(content="use ***", status="pending")]),
    ]
    # Ids, names and paths are not text a model or a tool wrote: left alone.
    started_elsewhere = SessionStarted(agent="gemini", session_id=KEY, cwd=f"/w/{KEY}")
    assert masker.event(started_elsewhere) is started_elsewhere
    assert SessionStarted not in TEXT_FIELDS


def test_a_secret_inside_another_is_masked_whole() -> None:
    masker = Masker(["abcdefgh", "xxabcdefghyy"])
    assert masker.text("1 xxabcdefghyy 2 abcdefgh") == "1 *** 2 ***"


@given(
    before=st.text(alphabet="ab\n =", max_size=30),
    after=st.text(alphabet="ab\n =", max_size=30),
    secret=st.text(alphabet="ab=-_", min_size=MIN_SECRET_CHARS, max_size=20),
    repeat=st.integers(min_value=1, max_value=3),
)
def test_no_masked_text_holds_the_secret(before: str, after: str, secret: str, repeat: int) -> None:
    text = before + (secret + after) * repeat
    masked = Masker([secret]).text(text)
    assert secret not in masked
    assert masked.count("***") >= 1
