"""Many sessions on one real `gemini --acp` 0.61.0, turns running at once."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import msgspec
import pytest

from gemwire.events import Event, FileChanged, TurnCompleted
from gemwire.runners.acp import AcpClient, AcpOptions, AcpSession, AcpTurnResult
from gemwire.testing import (
    Fail,
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SESSIONS = 20


def task(n: int) -> str:
    return f"task-{n:02d}"


async def test_twenty_concurrent_sessions_in_twenty_folders_on_one_agent(tmp_path: Path) -> None:
    turns: list[Reply | Fail] = []
    for n in range(SESSIONS):
        write = FunctionCall("write_file", {"file_path": f"out-{n:02d}.txt", "content": f"{n}\n"})
        turns += [Reply([write], when=task(n)), Reply([Text(f"Done {n}.")], when=task(n))]
    scenario = Scenario(turns=turns)
    streams: dict[str, list[Event]] = {}
    results: dict[str, AcpTurnResult] = {}
    folders = [tmp_path / f"project-{n:02d}" for n in range(SESSIONS)]
    for folder in folders:
        folder.mkdir()

    async def one(n: int, session: AcpSession) -> None:
        async with session.prompt(f"{task(n)}: write the file") as turn:
            streams[task(n)] = [event async for event in turn]
        results[task(n)] = turn.result

    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "gemini")
        options = AcpOptions(
            command=(*pinned_gemini_command(), "--acp"),
            cwd=str(env.workspace),
            env=env.environ(),
            inherit_env=False,
            permissions="edits",
        )
        started = time.monotonic()
        with anyio.fail_after(240):
            async with AcpClient(options) as client:
                sessions: list[AcpSession] = [None] * SESSIONS  # type: ignore[list-item]

                async def open_one(n: int) -> None:
                    sessions[n] = await client.new_session(cwd=str(folders[n]))

                async with anyio.create_task_group() as tg:  # opened concurrently too
                    for n in range(SESSIONS):
                        tg.start_soon(open_one, n)
                async with anyio.create_task_group() as tg:
                    for n, session in enumerate(sessions):
                        tg.start_soon(one, n, session)
                assert client.running
        elapsed = time.monotonic() - started
        assert model.problems == []
        assert model.turns_left == 0
    assert env.live_processes() == []
    assert len({s.session_id for s in sessions}) == SESSIONS
    for n, session in enumerate(sessions):
        events = streams[task(n)]
        assert {e.session_id for e in events} == {session.session_id}, n
        assert sum(isinstance(e, TurnCompleted) for e in events) == 1
        assert isinstance(events[-1], TurnCompleted)
        result = results[task(n)]
        assert (result.ok, result.answer) == (True, f"Done {n}."), result
        target = folders[n] / f"out-{n:02d}.txt"
        assert [(e.path, e.change) for e in result.files_changed] == [(str(target), "created")]
        assert [e.path for e in events if isinstance(e, FileChanged)] == [str(target)]
        assert target.read_text() == f"{n}\n"
        assert sorted(p.name for p in folders[n].iterdir()) == [f"out-{n:02d}.txt"]
    print(f"{SESSIONS} sessions, one agent: {elapsed:.1f} s")


def test_options_rename_keeps_a_deprecated_alias() -> None:
    with pytest.warns(DeprecationWarning, match="include_directories"):
        options = AcpOptions(command=("x",), additional_directories=("/a",))
    assert (options.include_directories, options.additional_directories) == (("/a",), ())
    assert msgspec.structs.replace(options, include_directories=()).include_directories == ()
