"""A resumed session survives Gemini's retention cleanup (docs/gemini-cli.md#session-cleanup).

Resuming in a later minute than the session's file makes the CLI write a stub file with the
same short id; the next CLI start in that project deletes the stub as not resumable *and every
file with its short id*: the session is gone. gemwire removes the stub its run made.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import msgspec
import pytest

from gemwire import GeminiOptions, RunResult, run_gemini
from gemwire.testing import (
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# Retention as Gemini ships it (the test kit turns it off by default).
RETENTION_ON = {"general": {"sessionRetention": {"enabled": True, "maxAge": "30d"}}}


async def run_to_end(prompt: str, options: GeminiOptions) -> RunResult:
    async with run_gemini(prompt, options) as run:
        async for _ in run:
            pass
    return run.result


def chat_files(env: IsolatedGemini) -> list[str]:
    return sorted(p.name for p in env.gemini_dir.glob("tmp/*/chats/*"))


def backdate(env: IsolatedGemini, session_id: str) -> Path:
    """Rename the session's file to an earlier minute, as if it were resumed a day later."""
    (path,) = env.gemini_dir.glob(f"tmp/*/chats/session-*-{session_id[:8]}.jsonl")
    return path.rename(path.with_name(f"session-2026-01-01T00-00-{session_id[:8]}.jsonl"))


def scenario() -> Scenario:
    return Scenario(
        turns=[
            Reply([Text("I will remember 7.")], when="remember"),
            Reply([Text("It was 7.")], when="which number", repeat=2),
            Reply([Text("Something else.")], when="else"),
        ]
    )


async def test_a_resumed_session_survives_the_next_start(tmp_path: Path) -> None:
    with (
        ScriptedModel(scenario()) as model,
        IsolatedGemini(model.url, settings=RETENTION_ON, root=tmp_path) as env,
    ):
        options = env.gemini_options()
        first = await run_to_end("remember the number 7", options)
        assert first.session_id is not None
        original = backdate(env, first.session_id)
        resumed = msgspec.structs.replace(options, resume=first.session_id)
        during: list[str] = []
        async with run_gemini("which number was it?", resumed) as run:
            async for event in run:
                if event.type == "user_message":  # right after session_started
                    during = chat_files(env)
        second = run.result
        assert (second.ok, second.session_id) == (True, first.session_id)
        # The stub is gone while the run still goes on (a CLI starting alongside would
        # otherwise take the session with it), and stays gone.
        assert during == chat_files(env) == [original.name]
        other = await run_to_end("something else", options)  # its start runs the cleanup
        assert other.ok
        assert other.session_id != first.session_id
        assert original.exists()
        third = await run_to_end("which number was it, again?", resumed)
        assert (third.ok, third.answer) == (True, "It was 7.")
        assert "remember the number 7" in model.requests[-1].texts()


def test_without_gemwire_the_cli_loses_the_resumed_session(tmp_path: Path) -> None:
    """The hazard itself, with the bare CLI: if it is ever fixed upstream, this fails."""
    with (
        ScriptedModel(scenario()) as model,
        IsolatedGemini(model.url, settings=RETENTION_ON, root=tmp_path) as env,
    ):

        def gemini(prompt: str, *args: str) -> None:
            subprocess.run(
                [*pinned_gemini_command(), "-o", "stream-json", *args],
                input=prompt.encode(),
                cwd=env.workspace,
                env=env.environ(),
                capture_output=True,
                check=True,
            )

        gemini("remember the number 7")
        (path,) = env.gemini_dir.glob("tmp/*/chats/session-*.jsonl")
        session_id = msgspec.json.decode(path.read_bytes().split(b"\n")[0])["sessionId"]
        original = backdate(env, session_id)
        gemini("which number was it?", "--resume", session_id)
        assert len(chat_files(env)) == 2  # the original and the stub
        gemini("something else")
        assert not original.exists()
        assert [name for name in chat_files(env) if session_id[:8] in name] == []
