"""The ACP client driving the real `gemini --acp` 0.61.0 against the scripted model.

A case that needs nothing of its own but a session runs on the module's shared agent
(``agent_pool``); one with its own settings, model or process life starts its own."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import msgspec
import pytest
from kit.shared_agents import AgentPool, SharedAgent

from gemwire.errors import AgentRequestFailed
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    Notice,
    PermissionResolved,
    SessionStarted,
    SessionUpdated,
    ToolCallFinished,
    TurnCompleted,
    TurnError,
    UserMessage,
)
from gemwire.runners.acp import AcpClient, AcpOptions, AcpTurnResult, PermissionPreset, run_acp
from gemwire.testing import (
    Fail,
    FunctionCall,
    Hang,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


def acp_options(env: IsolatedGemini, **changes: object) -> AcpOptions:
    base = AcpOptions(
        command=(*pinned_gemini_command(), "--acp"),
        cwd=str(env.workspace),
        env=env.environ(),
        inherit_env=False,
    )
    return msgspec.structs.replace(base, **changes)


async def run(
    scenario: Scenario,
    tmp_path: Path,
    prompt: str = "go",
    *,
    settings: dict[str, object] | None = None,
    **changes: object,
) -> tuple[list[Event], AcpTurnResult, IsolatedGemini]:
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files, settings=settings, root=tmp_path)
        with anyio.fail_after(90):
            async with run_acp(prompt, acp_options(env, **changes)) as turn:
                events = [event async for event in turn]
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    assert isinstance(events[-1], TurnCompleted)
    assert env.live_processes() == []
    return events, turn.result, env


def run_shared(
    agent_pool: AgentPool, scenario: Scenario, tmp_path: Path, permissions: PermissionPreset
) -> tuple[list[Event], AcpTurnResult, Path]:
    """``scenario`` as a session of its own on the module's shared `gemini --acp`, in
    ``tmp_path``/workspace; the events, the result and the workspace."""
    shared = agent_pool.get("gemini", permissions)
    workspace = tmp_path / "workspace"
    shared.play(scenario, workspace, scenario.files)
    events, result = shared.call(shared_turn, shared, workspace, permissions)
    assert shared.model.problems == []
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    assert isinstance(events[-1], TurnCompleted)
    return events, result, workspace


async def shared_turn(
    shared: SharedAgent, workspace: Path, permissions: PermissionPreset
) -> tuple[list[Event], AcpTurnResult]:
    with anyio.fail_after(90):
        session = await shared.session(workspace, permissions)
        async with session.prompt("go") as turn:
            events = [event async for event in turn]
    return events, turn.result


def write(path: str, content: str = "hi there\n") -> FunctionCall:
    return FunctionCall("write_file", {"file_path": path, "content": content})


def test_a_new_session_and_a_plain_answer(tmp_path: Path, agent_pool: AgentPool) -> None:
    events, result, workspace = run_shared(
        agent_pool, Scenario(turns=[Reply([Text("Hello "), Text("there.")])]), tmp_path, "deny"
    )
    started = events[0]
    assert isinstance(started, SessionStarted)
    assert (started.agent, started.model, started.cwd, started.agent_version) == (
        "acp:gemini-cli",
        "auto",
        str(workspace),
        "0.61.0",
    )
    assert [e.type for e in events if e.type != "session_updated"] == [
        "session_started",
        "user_message",
        "message_delta",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    assert (result.ok, result.stop_reason, result.answer, result.error) == (
        True,
        "end_turn",
        "Hello there.",
        None,
    )
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (100, 10)
    assert set(result.usage.by_model) == {"gemini-3.8-flash"}


def test_a_new_file_is_created_through_the_client_file_system(
    tmp_path: Path, agent_pool: AgentPool
) -> None:
    scenario = Scenario(turns=[Reply([write("hello.txt")]), Reply([Text("Done.")])])
    events, result, workspace = run_shared(agent_pool, scenario, tmp_path, "edits")
    assert (workspace / "hello.txt").read_text() == "hi there\n"
    changed = [e for e in events if isinstance(e, FileChanged)]
    assert [(e.path, e.change, e.derived) for e in changed] == [
        (str(workspace / "hello.txt"), "created", False)
    ]
    assert result.files_changed == changed
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.status == "completed"
    assert finished.diff is not None
    assert finished.diff.endswith("+hi there\n")
    assert result.answer == "Done."


@pytest.mark.parametrize(
    ("preset", "tool", "allowed"),
    [
        ("deny", "write_file", False),
        ("reads", "write_file", False),
        ("edits", "write_file", True),
        ("all", "write_file", True),
        ("edits", "run_shell_command", False),
        ("all", "run_shell_command", True),
    ],
)
def test_each_preset_answers_a_permission_request(
    preset: PermissionPreset, tool: str, allowed: bool, tmp_path: Path, agent_pool: AgentPool
) -> None:
    call = (
        write("made.txt")
        if tool == "write_file"
        else FunctionCall("run_shell_command", {"command": "touch made.txt"})
    )
    scenario = Scenario(turns=[Reply([call]), Reply([Text("ok")])])
    events, result, workspace = run_shared(agent_pool, scenario, tmp_path, preset)
    (resolved,) = [e for e in events if isinstance(e, PermissionResolved)]
    assert resolved.option_id == ("proceed_once" if allowed else "cancel")
    assert (workspace / "made.txt").exists() == allowed
    types = [e.type for e in events]
    assert types.count("tool_call_started") == types.count("tool_call_finished") == 1
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    if allowed:
        assert (finished.status, finished.error) == ("completed", None)
    else:
        assert finished.status == "cancelled"
        assert finished.error is not None
        assert finished.error.type == "rejected"
        assert types.index("tool_call_finished") < types.index("turn_completed")
    assert result.ok


def test_replace_on_an_existing_file(tmp_path: Path, agent_pool: AgentPool) -> None:
    replace = FunctionCall(
        "replace",
        {"file_path": "a.txt", "instruction": "i", "old_string": "old", "new_string": "new"},
    )
    scenario = Scenario(
        files={"a.txt": "old line\n"}, turns=[Reply([replace]), Reply([Text("ok")])]
    )
    events, result, workspace = run_shared(agent_pool, scenario, tmp_path, "edits")
    assert (workspace / "a.txt").read_text() == "new line\n"
    assert [(e.path, e.change) for e in result.files_changed] == [
        (str(workspace / "a.txt"), "modified")
    ]
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.diff is not None
    assert "-old line\n+new line\n" in finished.diff


async def test_cancel_mid_turn(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text("Working on it"), Hang()])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        async with AcpClient(acp_options(env)) as client:
            session = await client.new_session()
            async with session.prompt("go") as turn:
                events = []
                async for event in turn:
                    events.append(event)
                    if isinstance(event, MessageDelta):
                        cancelled_at = time.monotonic()
                        await session.cancel()
            ended = time.monotonic() - cancelled_at
    assert turn.result.stop_reason == "cancelled"
    assert turn.result.error == TurnError(kind="cancelled", message="the turn was cancelled")
    assert turn.result.answer == "Working on it"
    assert ended < 5  # the agent ended it (the client would wait CANCEL_GRACE = 10 s)
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1


async def test_set_mode_yolo_runs_writes_without_asking(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([write("y.txt")]), Reply([Text("ok")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        async with AcpClient(acp_options(env)) as client:
            session = await client.new_session()
            assert session.current_mode_id == "default"
            assert session.modes is not None
            assert [m.id for m in session.modes.available_modes] == [
                "default",
                "autoEdit",
                "yolo",
                "plan",
            ]
            await session.set_mode("yolo")
            assert session.current_mode_id == "yolo"
            with pytest.raises(AgentRequestFailed) as refused:
                await session.set_mode("bogus")
            assert refused.value.code == -32603
            async with session.prompt("go") as turn:
                events = [event async for event in turn]
    assert (env.workspace / "y.txt").read_text() == "hi there\n"
    assert "permission_requested" not in [e.type for e in events]
    # Gemini CLI announces the change as assistant text, outside any turn: a mode change.
    (marker,) = [e for e in events if isinstance(e, SessionUpdated) and e.origin]
    assert (marker.update, marker.data) == ("current_mode_update", {"currentModeId": "yolo"})
    assert [e.text for e in events if isinstance(e, MessageDelta)] == ["ok"]
    assert turn.result.answer == "ok"


async def test_set_model_and_optional_methods(tmp_path: Path) -> None:
    with ScriptedModel(Scenario(turns=[Reply([Text("ok")])])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        async with AcpClient(acp_options(env)) as client:
            session = await client.new_session()
            assert session.models is not None
            assert session.models.current_model_id == "auto"
            await session.set_model("gemini-3.1-pro-preview")
            assert session.models.current_model_id == "gemini-3.1-pro-preview"
            # Gemini CLI does not advertise session/list (and answers Method not found).
            with pytest.raises(AgentRequestFailed) as unsupported:
                await client.list_sessions()
            assert unsupported.value.unsupported
            async with session.prompt("go") as turn:
                await turn.wait()
    assert turn.result.ok


async def test_load_a_previous_session_replays_it_flagged(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text("First answer.")]), Reply([Text("Second answer.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        async with run_acp("remember the word kiwi", acp_options(env)) as first:
            await first.wait()
        session_id = first.result.session_id
        # Gemini CLI 0.61.0 names the file a load creates after the current minute and the
        # session id; within the session's first minute that is the session's own file,
        # and the load resets it (and then finds no session). Make the session an older one.
        (session_file,) = [p for p in env.session_files() if session_id[:8] in p.name]
        session_file.rename(
            session_file.with_name(f"session-2020-01-01T00-00-{session_id[:8]}.jsonl")
        )
        async with AcpClient(acp_options(env)) as client:
            session = await client.load_session(session_id)
            async with session.prompt("what was the word?") as turn:
                events = [event async for event in turn]
    replayed = [e for e in events if e.replay is True]
    live = [e for e in events if e.replay is not True]
    assert live[0] == SessionStarted(
        agent="acp:gemini-cli",
        session_id=session_id,
        cwd=str(env.workspace),
        agent_version="0.61.0",
    )
    assert any(isinstance(e, UserMessage) and "remember the word kiwi" in e.text for e in replayed)
    assert [e.text for e in replayed if isinstance(e, MessageDelta)] == ["First answer."]
    assert [e.type for e in live if e.type not in ("session_updated",)][1:] == [
        "user_message",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    assert (turn.result.session_id, turn.result.answer) == (session_id, "Second answer.")


async def test_a_loaded_session_survives_geminis_next_start(tmp_path: Path) -> None:
    """session/load writes a stub that Gemini's retention cleanup takes the session with
    (docs/running.md, "Resuming"); the client removes it."""
    retention = {"general": {"sessionRetention": {"enabled": True, "maxAge": "30d"}}}
    scenario = Scenario(turns=[Reply([Text("First.")]), Reply([Text("Second.")], repeat=3)])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, settings=retention, root=tmp_path)
        async with run_acp("remember kiwi", acp_options(env)) as first:
            await first.wait()
        session_id = first.result.session_id
        (session_file,) = [p for p in env.session_files() if session_id[:8] in p.name]
        older = session_file.rename(
            session_file.with_name(f"session-2020-01-01T00-00-{session_id[:8]}.jsonl")
        )
        async with AcpClient(acp_options(env)) as client:
            await client.load_session(session_id)
            assert [p.name for p in env.session_files() if session_id[:8] in p.name] == [older.name]
        async with run_acp("something else", acp_options(env)) as other:  # runs the cleanup
            await other.wait()
        assert older.exists()


async def test_a_persistent_429_is_rate_limited(tmp_path: Path) -> None:
    started = time.monotonic()
    _, result, _ = await run(
        Scenario(turns=[Fail(429, repeat=3)]), tmp_path, settings={"general": {"maxAttempts": 1}}
    )
    assert (result.ok, result.stop_reason) == (False, "error")
    assert result.error is not None
    assert result.error.kind == "rate_limited"
    assert time.monotonic() - started < 30
    with pytest.raises(Exception, match="Resource has been exhausted") as raised:
        result.raise_for_error()
    assert type(raised.value).__name__ == "RateLimited"


async def test_an_invalid_key_is_auth(tmp_path: Path) -> None:
    _, result, _ = await run(Scenario(api_key="the-real-key", turns=[]), tmp_path)
    assert result.error is not None
    assert result.error.kind == "auth"
    assert "API key not valid" in result.error.message


async def test_writes_outside_the_workspace_are_denied(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    scenario = Scenario(
        turns=[
            Reply(
                [
                    write("../outside/dotdot.txt", "pwned\n"),
                    write(str(outside / "absolute.txt"), "pwned\n"),
                    write("link/through_link.txt", "pwned\n"),
                    write("dangling", "pwned\n"),
                    write("nul\u0000byte.txt", "pwned\n"),
                ]
            ),
            Reply([Text("tried")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        os.symlink(outside, env.workspace / "link")
        os.symlink(outside / "dangled.txt", env.workspace / "dangling")
        async with AcpClient(acp_options(env, permissions="all")) as client:
            session = await client.new_session()
            async with session.prompt("go") as turn:
                events = [event async for event in turn]
    assert sorted(p.name for p in outside.iterdir()) == []
    # Gemini CLI drops the NUL from the path itself: that write lands inside, harmlessly
    # (the client's own NUL check is tested with a fake agent).
    assert sorted(p.name for p in env.workspace.iterdir()) == ["dangling", "link", "nulbyte.txt"]
    finished = {e.call_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert sorted(finished.values()) == ["completed", "failed", "failed", "failed", "failed"]
    assert [e.path for e in turn.result.files_changed] == [str(env.workspace / "nulbyte.txt")]
    # Gemini CLI refuses these paths itself before asking the client (the client's own
    # confinement is tested with a fake agent that asks for them).
    assert [e for e in events if isinstance(e, Notice)] == []
