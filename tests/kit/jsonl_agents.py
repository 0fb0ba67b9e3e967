"""The agents whose sessions are JSON lines (`gemwire.sessions._jsonl`), as the shared tests
in tests/unit/sessions/test_jsonl_sources.py see them: where each one's recordings are, its types, its home, and
what its recordings add up to."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gemwire.sessions import (
    ClaudeConversation,
    ClaudeHome,
    CodexConversation,
    CodexHome,
    QwenConversation,
    QwenHome,
)
from gemwire.sessions._jsonl import JsonlConversation
from gemwire.sessions.claude import project_slug as claude_slug
from gemwire.sessions.qwen import project_slug as qwen_slug
from gemwire.wire import claude_session, codex_session, qwen_session
from kit.corpus import FIXTURES

__all__ = ("JSONL_AGENTS", "JsonlAgent", "cases_of")


@dataclass(frozen=True)
class JsonlAgent:
    agent: str
    recordings: Path
    kind: type[JsonlConversation[Any]]
    record: type[Any]
    home: Callable[[Path], Any]
    """The agent's `SessionSource` under a home folder."""
    folder: Callable[[Path, Path], Path]
    """Where a session of ``workspace`` goes in the home folder ``home``."""
    file_name: Callable[[str], str]
    """A session file's name from its id."""
    session_id: Callable[[str], str]
    """The session id of a recording's text."""
    env: Callable[[Path], dict[str, str]]
    """The environment that points the agent at the home folder ``home``."""
    first_line: bytes
    """A record that starts a session (hostile files are appended to it)."""
    model: str
    tokens: int
    """Every scripted response's tokens, in and out."""
    responses: dict[str, int]
    """Each recording's model responses."""
    unspent: int = 0
    """Tokens the recordings' cancelled responses did not spend (of ``tokens`` each)."""

    def __str__(self) -> str:
        return self.agent


def cases_of(recordings: Path) -> list[str]:
    return sorted(
        p.name.removesuffix(".jsonl") for p in recordings.glob("*.jsonl") if "." not in p.stem
    )


_TURNS = {"answer": 1, "cancel": 0, "edit": 3, "shell": 2, "shell_denied": 1}
_TURNS |= {"multi_turn": 3, "tool_error": 3, "write": 2, "write_denied": 1}


def _first_id(text: str) -> str:
    return str(json.loads(text.splitlines()[0])["sessionId"])


def _first_session_id(text: str) -> str:
    """The first record's ``sessionId`` that has one (Claude Code 2.1.318 starts with a
    ``queue-operation``, which has one too)."""
    return next(
        str(record["sessionId"])
        for record in map(json.loads, text.splitlines())
        if "sessionId" in record
    )


def _codex_id(text: str) -> str:
    return str(json.loads(text.splitlines()[0])["payload"]["id"])


JSONL_AGENTS = [
    JsonlAgent(
        agent="claude",
        recordings=FIXTURES / "claude" / "0.16.2",
        kind=ClaudeConversation,
        record=claude_session.Record,
        home=ClaudeHome,
        folder=lambda home, w: home / ".claude" / "projects" / claude_slug(str(w)),
        file_name=lambda sid: f"{sid}.jsonl",
        session_id=_first_id,
        env=lambda home: {"CLAUDE_CONFIG_DIR": str(home / ".claude")},
        first_line=(
            b'{"type":"user","sessionId":"s1","cwd":"/w","message":{"role":"user","content":"hi"}}'
        ),
        model="claude-sonnet-4-5-20250929",
        tokens=101,  # its records of one response share an id: 100 in + 1 out
        responses=_TURNS,
    ),
    JsonlAgent(
        agent="codex",
        recordings=FIXTURES / "codex" / "0.16.0",
        kind=CodexConversation,
        record=codex_session.Record,
        home=CodexHome,
        folder=lambda home, w: home / ".codex" / "sessions" / "2026" / "11" / "25",
        file_name=lambda sid: f"rollout-2026-11-25T17-33-00-{sid}.jsonl",
        session_id=_codex_id,
        env=lambda home: {"CODEX_HOME": str(home / ".codex")},
        first_line=(
            b'{"timestamp":"2026-11-25T17:33:00.000Z","type":"session_meta",'
            b'"payload":{"id":"s1","cwd":"/w"}}'
        ),
        model="gpt-5.4-mini",
        tokens=110,  # the cumulative count goes up 100 in + 10 out a response
        responses=_TURNS,
    ),
    # Today's adapters (tests/e2e/agents/test_saved_sessions_today.py recorded them).
    JsonlAgent(
        agent="claude",
        recordings=FIXTURES / "claude" / "0.101.0",
        kind=ClaudeConversation,
        record=claude_session.Record,
        home=ClaudeHome,
        folder=lambda home, w: home / ".claude" / "projects" / claude_slug(str(w)),
        file_name=lambda sid: f"{sid}.jsonl",
        session_id=_first_session_id,
        env=lambda home: {"CLAUDE_CONFIG_DIR": str(home / ".claude")},
        first_line=(
            b'{"type":"user","sessionId":"s1","cwd":"/w","message":{"role":"user","content":"hi"}}'
        ),
        model="claude-opus-5-5",
        tokens=110,  # 100 in + 10 out a response
        # Claude Code 2.1.318 saves the cancelled response, and answers after a denial.
        responses=_TURNS | {"cancel": 1, "shell_denied": 2, "write_denied": 2},
        unspent=9,  # the cancelled response wrote 1 token of 10
    ),
    JsonlAgent(
        agent="codex",
        recordings=FIXTURES / "codex" / "2.6.0",
        kind=CodexConversation,
        record=codex_session.Record,
        home=CodexHome,
        folder=lambda home, w: home / ".codex" / "sessions" / "2026" / "12" / "02",
        file_name=lambda sid: f"rollout-2026-12-02T05-38-48-{sid}.jsonl",
        session_id=_codex_id,
        env=lambda home: {"CODEX_HOME": str(home / ".codex")},
        first_line=(
            b'{"timestamp":"2026-12-02T05:38:48.523Z","ordinal":0,"type":"session_meta",'
            b'"payload":{"id":"s1","cwd":"/w"}}'
        ),
        model="gpt-5.5",
        tokens=110,  # token_usage_record: 100 in + 10 out a response
        # In read-only, Codex runs the command in its sandbox (it fails) and answers.
        responses=_TURNS | {"shell_denied": 2},
    ),
    JsonlAgent(
        agent="qwen",
        recordings=FIXTURES / "qwen" / "0.24.4",
        kind=QwenConversation,
        record=qwen_session.Record,
        home=QwenHome,
        folder=lambda home, w: home / ".qwen" / "projects" / qwen_slug(str(w)) / "chats",
        file_name=lambda sid: f"{sid}.jsonl",
        session_id=_first_id,
        env=lambda home: {"QWEN_HOME": str(home / ".qwen"), "QWEN_RUNTIME_DIR": ""},
        first_line=(
            b'{"uuid":"u1","sessionId":"s1","type":"user","cwd":"/w",'
            b'"message":{"role":"user","parts":[{"text":"hi"}]}}'
        ),
        model="gemwire-scripted",
        tokens=110,  # one assistant record a response: 100 in + 10 out
        responses=_TURNS,
    ),
]


def materialize(spec: JsonlAgent, home: Path, workspace: Path) -> list[Path]:
    """Every recording as a session of ``workspace`` in the home folder ``home``."""
    folder = spec.folder(home, workspace)
    folder.mkdir(parents=True)
    made = []
    for case in cases_of(spec.recordings):
        text = (spec.recordings / f"{case}.jsonl").read_text()
        text = text.replace("__WORKSPACE__", str(workspace))
        made.append(folder / spec.file_name(spec.session_id(text)))
        made[-1].write_text(text)
    return made
