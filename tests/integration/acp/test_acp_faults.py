"""The ACP client against a fake agent that misbehaves: every turn ends cleanly, once."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import msgspec
import pytest

from gemwire.errors import AgentCrashed, AgentNotFound
from gemwire.events import (
    Event,
    MessageDelta,
    Notice,
    PermissionResolved,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    TurnError,
    Unknown,
)
from gemwire.runners.acp import (
    MAX_QUEUED_EVENTS,
    AcpClient,
    AcpOptions,
    AcpTurnResult,
    PermissionRequest,
    TerminalRequest,
    allow_all_commands,
    run_acp,
    turn as acp_turn,
)

pytestmark = pytest.mark.anyio

FAKE = Path(__file__).with_name("fake_agent.py")


def options(mode: str, tmp_path: Path, **changes: object) -> AcpOptions:
    base = AcpOptions(
        command=(sys.executable, str(FAKE)), cwd=str(tmp_path), env={"FAKE_ACP_MODE": mode}
    )
    return msgspec.structs.replace(base, **changes)


async def run(mode: str, tmp_path: Path, **kwargs: object) -> tuple[list[Event], AcpTurnResult]:
    changes = {k: kwargs.pop(k) for k in list(kwargs) if k in AcpOptions.__struct_fields__}
    with anyio.fail_after(60):
        async with run_acp("hi", options(mode, tmp_path, **changes), **kwargs) as turn:  # type: ignore[arg-type]
            events = [event async for event in turn]
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    assert isinstance(events[-1], TurnCompleted)
    return events, turn.result


def texts(events: list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, MessageDelta)]


async def test_a_plain_turn(tmp_path: Path) -> None:
    events, result = await run("echo", tmp_path)
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "message_delta",
        "turn_completed",
    ]
    assert (result.ok, result.answer, result.stop_reason, result.session_id) == (
        True,
        "echo: hi",
        "end_turn",
        "fake-session",
    )
    assert events[0].agent == "acp:scripted"


async def test_initialize_declares_exactly_what_the_client_serves(tmp_path: Path) -> None:
    async with AcpClient(options("echo", tmp_path)) as client:
        pass
    line = next(x for x in client.stderr_tail.splitlines() if x.startswith("initialize "))
    sent = json.loads(line.removeprefix("initialize "))
    assert sent["clientCapabilities"] == {
        "fs": {"readTextFile": False, "writeTextFile": True},
        "terminal": False,
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        "plan": {},
    }
    assert sent["protocolVersion"] == 1
    assert sent["clientInfo"]["name"] == "gemwire"
    async with AcpClient(
        options("echo", tmp_path, serve_reads=True), terminal_policy=allow_all_commands
    ) as client:
        pass
    line = next(x for x in client.stderr_tail.splitlines() if x.startswith("initialize "))
    assert json.loads(line.removeprefix("initialize "))["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        "plan": {},
    }


async def test_a_crash_mid_request_fails_the_turn_once_with_the_partial_answer(
    tmp_path: Path,
) -> None:
    events, result = await run("crash_mid_request", tmp_path)
    assert texts(events) == ["partial"]
    assert result.answer == "partial"
    assert result.error == TurnError(
        kind="crashed",
        message="the agent exited with code -9 before answering session/prompt",
        exit_code=-9,
    )
    assert (result.ok, result.stop_reason, result.exit_code) == (False, "error", -9)


async def test_a_crash_fails_pending_control_requests_with_a_typed_error(tmp_path: Path) -> None:
    async with AcpClient(options("crash_mid_request", tmp_path)) as client:
        session = await client.new_session()
        async with session.prompt("hi") as turn:
            await turn.wait()
        with pytest.raises(AgentCrashed, match="before answering session/set_mode"):
            await session.set_mode("yolo")


async def test_garbage_frames_become_notices_and_unknown_events(tmp_path: Path) -> None:
    events, result = await run("garbage", tmp_path)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert [n.split(":")[0] for n in notices] == [
        "protocol violation",
        "protocol violation",
        "protocol violation",
        "protocol violation",
        "protocol violation",
        "refused the agent's foo/bar",
        "refused the agent's fs/write_text_file",
    ]
    assert "a response for unknown request id 4242" in notices[3]
    unknown = [(e.upstream_type, json.loads(e.raw)) for e in events if isinstance(e, Unknown)]
    assert unknown[0] == ("_vendor/ping", {"n": 1})
    assert unknown[1][0] == "teleport_update"
    assert unknown[2][0] == "agent_message_chunk"  # content of an unknown type
    assert texts(events) == [
        'reply foo/bar: {"error": {"code": -32601, "message": "Method not found: foo/bar"}}',
        texts(events)[1],
        "still here",
    ]
    assert texts(events)[1].startswith('reply fs/write_text_file: {"error": {"code": -32602')
    assert (result.ok, result.stop_reason) == (True, "end_turn")


async def test_a_64_mb_frame_is_decoded(tmp_path: Path) -> None:
    events, result = await run("big_frame", tmp_path)
    assert [len(t) for t in texts(events)] == [64_000_000, 5]
    assert result.ok


async def test_a_64_mb_frame_over_the_cap_is_a_notice_and_the_turn_goes_on(tmp_path: Path) -> None:
    events, result = await run("big_frame", tmp_path, max_line_bytes=1 << 20)
    assert texts(events) == ["after"]
    (notice,) = [e.message for e in events if isinstance(e, Notice)]
    assert notice.startswith("skipped a 640001")
    assert notice.endswith("over the 1048576-byte limit")
    assert (result.ok, result.answer) == (True, "after")


async def test_a_flood_while_the_consumer_is_slow_loses_nothing_and_stays_bounded(
    tmp_path: Path,
) -> None:
    most = 0
    received: list[str] = []
    async with AcpClient(options("flood", tmp_path)) as client:
        session = await client.new_session()
        async with session.prompt("hi") as turn:
            async for event in turn:
                most = max(most, len(session.queue))
                if isinstance(event, MessageDelta):
                    received.append(event.text)
                    if len(received) % 2000 == 0:
                        await anyio.sleep(0.2)  # a slow consumer
    assert received == [f"{n} " for n in range(20_000)]
    assert turn.result.ok
    # The reader stops once MAX_QUEUED_EVENTS wait (plus what one read of 64 KiB holds).
    assert MAX_QUEUED_EVENTS <= most < MAX_QUEUED_EVENTS + 1000


async def test_cancel_answers_a_pending_permission_request_cancelled(tmp_path: Path) -> None:
    asked = anyio.Event()

    async def never_answers(request: PermissionRequest) -> str | None:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError

    async with AcpClient(
        options("permission", tmp_path), permission_handler=never_answers
    ) as client:
        session = await client.new_session()
        async with session.prompt("hi") as turn:
            await asked.wait()
            await session.cancel()
            events = [event async for event in turn]
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert [(e.call_id, e.option_id) for e in resolved] == [("call-1", None)]
    assert texts(events) == [
        'reply session/request_permission: {"outcome": {"outcome": "cancelled"}}'
    ]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.call_id, e.status, e.error.type if e.error else None) for e in finished] == [
        ("call-1", "cancelled", "rejected")
    ]
    assert turn.result.stop_reason == "cancelled"
    assert turn.result.error == TurnError(kind="cancelled", message="the turn was cancelled")


async def test_a_permission_handler_cannot_invent_an_option(tmp_path: Path) -> None:
    async def invents(request: PermissionRequest) -> str | None:
        return "allow_everything_forever"

    events, _result = await run("permission", tmp_path, permission_handler=invents)
    assert texts(events)[0] == (
        'reply session/request_permission: {"outcome": {"optionId": "no", "outcome": "selected"}}'
    )
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == [
        "the permission handler chose 'allow_everything_forever', which was not offered; denied"
    ]


async def test_a_turn_the_agent_never_ends_is_ended_after_cancel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(acp_turn, "CANCEL_GRACE", 0.5)
    started = time.monotonic()
    events, result = await run("ignore_cancel", tmp_path, timeout=1.0)
    assert result.error == TurnError(kind="timeout", message="the turn took longer than 1 s")
    assert result.answer == "working"
    assert time.monotonic() - started < 10
    assert [e.message for e in events if isinstance(e, Notice)] == [
        "the agent did not end the cancelled turn within 0.5 s"
    ]


async def test_a_deadline_around_the_whole_client_ends_the_turn_and_the_agent(
    tmp_path: Path,
) -> None:
    # The caller's scope cancels the client's own tasks too: nothing answers the prompt any
    # more, and leaving must not wait for a turn that cannot end (it hung for ever).
    started = time.monotonic()
    with anyio.move_on_after(1) as deadline:
        async with AcpClient(options("ignore_cancel", tmp_path)) as client:
            session = await client.new_session()
            async with session.prompt("hi") as turn:
                async for _ in turn:
                    pass
    assert deadline.cancelled_caught
    assert time.monotonic() - started < 15
    assert turn.result.error == TurnError(kind="cancelled", message="the caller stopped the turn")
    assert turn.result.answer == "working"
    assert not client.running


async def test_leaving_a_turn_early_cancels_it(tmp_path: Path) -> None:
    async with AcpClient(options("permission", tmp_path)) as client:
        session = await client.new_session()
        async with session.prompt("hi") as turn:
            async for event in turn:
                if event.type == "permission_requested":
                    break
    assert turn.result.error is not None
    assert turn.result.error.kind == "cancelled"


async def test_terminals_run_under_a_policy_and_honour_the_byte_limit(tmp_path: Path) -> None:
    commands: list[list[str]] = []

    def policy(request: TerminalRequest) -> bool:
        commands.append(list(request.argv))
        return True

    events, _result = await run("terminal", tmp_path, terminal_policy=policy)
    replies = [json.loads(t.split(": ", 1)[1]) for t in texts(events)]
    assert replies == [
        {"terminalId": "term-1"},
        {"exitCode": 3},
        {"output": replies[2]["output"], "truncated": False, "exitStatus": {"exitCode": 3}},
        {},
    ]
    assert sorted(replies[2]["output"].splitlines()) == ["err", "hello"]
    assert commands == [["sh", "-c", "printf 'hello\\n'; printf 'err\\n' >&2; exit 3"]]


async def test_a_command_killed_by_a_real_time_signal_is_named_and_the_turn_ends(
    tmp_path: Path,
) -> None:
    # Python's signal.Signals has no member for 40: naming it used to kill the client.
    env = {"FAKE_ACP_MODE": "terminal", "FAKE_ACP_TERMINAL": "printf 'bye\\n'; kill -40 $$"}
    events, result = await run("terminal", tmp_path, env=env, terminal_policy=allow_all_commands)
    replies = [json.loads(t.split(": ", 1)[1]) for t in texts(events)]
    assert replies == [
        {"terminalId": "term-1"},
        {"signal": "SIGRTMIN+6"},
        {"output": "bye\n", "truncated": False, "exitStatus": {"signal": "SIGRTMIN+6"}},
        {},
    ]
    assert (result.ok, result.stop_reason) == (True, "end_turn")


async def test_terminals_are_refused_without_a_policy(tmp_path: Path) -> None:
    events, _ = await run("terminal", tmp_path)
    assert texts(events) == [
        (
            'reply terminal/create: {"error": {"code": -32601, '
            '"message": "this client does not offer terminals"}}'
        )
    ]


async def test_a_missing_agent_is_agent_not_found(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound):
        async with AcpClient(AcpOptions(command=(str(tmp_path / "nope"),))):
            pass


async def test_the_client_file_system_is_confined_to_the_session_folders(tmp_path: Path) -> None:
    workspace, outside, extra = tmp_path / "ws", tmp_path / "outside", tmp_path / "extra"
    for folder in (workspace, outside, extra):
        folder.mkdir()
    (outside / "target.txt").write_text("keep\n")
    (workspace / "link").symlink_to(outside)
    (workspace / "dangling").symlink_to(outside / "dangled.txt")
    (workspace / "final").symlink_to(outside / "target.txt")
    (workspace / "loop").symlink_to(workspace / "loop")
    writes = [
        f"{workspace}/../outside/dotdot.txt",
        str(outside / "absolute.txt"),
        f"{workspace}/link/through_link.txt",
        f"{workspace}/dangling",
        f"{workspace}/final",
        f"{workspace}/nul\u0000byte.txt",
        "relative.txt",
        f"{workspace}/loop/x.txt",
        f"{workspace}/inside.txt",
        f"{workspace}/new/deep/file.txt",
        f"{extra}/extra.txt",
    ]
    reads = [str(outside / "target.txt"), f"{workspace}/inside.txt", f"{workspace}/missing.txt"]
    env = {
        "FAKE_ACP_MODE": "fs",
        "FAKE_ACP_PATHS": json.dumps(writes),
        "FAKE_ACP_READS": json.dumps(reads),
    }
    events, result = await run(
        "fs",
        tmp_path,
        cwd=str(workspace),
        include_directories=(str(extra),),
        env=env,
        serve_reads=True,
    )
    replies = [json.loads(t.split(": ", 1)[1]) for t in texts(events)]
    codes = [r["error"]["code"] if "error" in r else "ok" for r in replies]
    assert codes == [-32602] * 8 + ["ok"] * 3 + [-32602, "ok", -32002]
    assert replies[-2] == {"content": "pwned\n"}
    assert sorted(p.name for p in outside.iterdir()) == ["target.txt"]
    assert (outside / "target.txt").read_text() == "keep\n"
    assert (workspace / "inside.txt").read_text() == "pwned\n"
    assert (workspace / "new" / "deep" / "file.txt").read_text() == "pwned\n"
    assert (extra / "extra.txt").read_text() == "pwned\n"
    assert not list(workspace.glob("*.gemwire-tmp"))
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices[0] == (
        "the agent does not support additional directories; the client still serves files in them"
    )
    denials = notices[1:]
    assert len(denials) == 9
    assert all(d.startswith("denied the agent's fs/") for d in denials)
    assert "the path contains a NUL byte" in denials[5]
    assert result.ok


async def test_agent_requests_holding_half_an_emoji_are_answered_and_the_turn_ends(
    tmp_path: Path,
) -> None:
    events, result = await run("lone_surrogate", tmp_path, permissions="edits")
    assert texts(events) == [
        'reply session/request_permission: {"outcome": {"optionId": "yes", "outcome": "selected"}}',
        "reply fs/write_text_file: {}",
        "big \ufffd",
    ]
    assert (tmp_path / "cut.txt").read_text() == "cut \ufffd"
    assert (result.ok, result.answer) == (True, "".join(texts(events)))
    repaired = (
        "replaced 1 lone UTF-16 surrogate(s) in the agent's output with U+FFFD"
        " (half of a character, e.g. an emoji cut in two)"
    )
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == [repaired] * 3 + ["tool call 'call-1' never reported a result"]
    [started] = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started.title == "Write \ufffd"
