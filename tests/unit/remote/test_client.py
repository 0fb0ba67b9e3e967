"""gemwire.remote against the real server app in this loop, over scripted agents (no
process, no port): the events of a turn, a stream dropped and resumed, permissions,
cancel, settings, and the API's errors as `gemwire.errors`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import msgspec
import pytest
from acp_scripted import ScriptedAgent, scripted_client
from kit.remote import DroppingTransport, StreamingASGITransport
from kit.server import BASE, TOKEN, scripted_server

from gemwire.errors import RemoteError, ServerUnreachable
from gemwire.events import (
    Event,
    MessageDelta,
    Notice,
    PermissionOption,
    PermissionRequested,
    PermissionResolved,
    SessionStarted,
    ToolCallStarted,
    TurnCompleted,
    UserMessage,
)
from gemwire.remote import Reconnect, RemoteServer, connect
from gemwire.runners.acp import AcpOptions, PermissionHandler, PermissionRequest
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


async def write_with_permission(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    for word in ("Let", " me", " write", " it."):
        await agent.say(sid, word)
    call = {"toolCallId": "t1", "title": "Write a.txt", "kind": "edit", "status": "pending"}
    update = {"sessionId": sid, "update": {"sessionUpdate": "tool_call", **call}}
    await agent.send({"method": "session/update", "params": update})
    request = {
        "sessionId": sid,
        "toolCall": {"toolCallId": "t1"},
        "options": [{"optionId": o.option_id, "name": o.name, "kind": o.kind} for o in OPTIONS],
    }
    answer = await agent.request("session/request_permission", request)
    outcome = answer["result"]["outcome"]
    chosen = outcome.get("optionId", "cancelled")
    status = "completed" if chosen == "yes" else "failed"
    await agent.update(sid, "tool_call_update", toolCallId="t1", status=status)
    await agent.say(sid, f" Chose {chosen}.")
    return "end_turn"


async def wait_for_cancel(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, "Working")
    await agent.cancelled.wait()
    return "cancelled"


async def count_to_ten(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    for n in range(1, 11):
        await agent.say(sid, f"{n} ")
    return "end_turn"


class Asked:
    """A permission handler that answers ``answer`` and keeps what it was asked."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> str | None:
        self.requests.append(request)
        return self.answer


@asynccontextmanager
async def remote(
    tmp_path: Path,
    on_prompt: Any,
    *,
    cuts: dict[int, int] | None = None,
    refuse: int = 0,
    state: str = "state",
) -> AsyncIterator[tuple[RemoteServer, DroppingTransport]]:
    """A scripted server (root ``tmp_path``) and a `gemwire.remote` client of it, through
    a transport that drops the event streams ``cuts`` names."""
    (tmp_path / state).mkdir()
    async with (
        scripted_server(str(tmp_path), str(tmp_path / state), on_prompt) as (served, _),
        anyio.create_task_group() as tg,
    ):
        transport = DroppingTransport(
            StreamingASGITransport(served.app, tg), cuts or {}, refuse=refuse
        )
        fast = Reconnect(attempts=2, backoff=0.01)
        async with connect(BASE, token=TOKEN, transport=transport, reconnect=fast) as server:
            yield server, transport
        tg.cancel_scope.cancel()


async def remote_turn(
    tmp_path: Path, on_prompt: Any, handler: PermissionHandler | None, **kwargs: Any
) -> tuple[list[Event], Any, DroppingTransport]:
    async with remote(tmp_path, on_prompt, **kwargs) as (server, transport):
        session = await server.new_session(
            "scripted", cwd=str(tmp_path), permission_handler=handler
        )
        async with session.prompt("write a.txt") as turn:
            events = [event async for event in turn]
        return events, turn.result, transport


async def local_turn(
    tmp_path: Path, on_prompt: Any, handler: PermissionHandler | None
) -> tuple[list[Event], Any]:
    async with scripted_client(
        AcpOptions(cwd=str(tmp_path)), on_prompt=on_prompt, permission_handler=handler
    ) as (client, _):
        session = await client.new_session()
        async with session.prompt("write a.txt") as turn:
            events = [event async for event in turn]
        return events, turn.result


def same_run(events: list[Event]) -> list[Event]:
    """The events without what differs between two runs: the agent's session id and the
    turn's duration."""
    changed: list[Event] = []
    for event in events:
        event = msgspec.structs.replace(event, session_id="s")
        if isinstance(event, TurnCompleted):
            event = msgspec.structs.replace(event, duration_ms=None)
        changed.append(event)
    return changed


async def test_a_turn_gives_the_events_a_local_client_gives(tmp_path: Path) -> None:
    remote_handler, local_handler = Asked("yes"), Asked("yes")
    events, result, _ = await remote_turn(tmp_path, write_with_permission, remote_handler)
    local_events, local_result = await local_turn(tmp_path, write_with_permission, local_handler)

    assert same_run(events) == same_run(local_events)
    agent, sid = "acp:scripted", events[0].session_id
    assert [type(e) for e in events] == [
        SessionStarted,
        UserMessage,
        *[MessageDelta] * 4,
        ToolCallStarted,
        PermissionRequested,
        PermissionResolved,
        type(local_events[9]),  # tool_call_finished, as the local client makes it
        MessageDelta,
        TurnCompleted,
    ]
    assert events[0] == SessionStarted(
        agent=agent, session_id=sid, cwd=str(tmp_path), agent_version="1.0"
    )
    requested, completed = events[7], events[-1]
    assert isinstance(requested, PermissionRequested)
    assert isinstance(completed, TurnCompleted)
    assert events[8] == PermissionResolved(
        agent=agent, session_id=sid, request_id=requested.request_id, call_id="t1", option_id="yes"
    )
    assert completed == msgspec.structs.replace(
        local_events[-1], session_id=sid, duration_ms=completed.duration_ms
    )
    assert (result.ok, result.answer, result.stop_reason) == (
        True,
        "Let me write it.\n\n Chose yes.",
        "end_turn",
    )
    assert result == msgspec.structs.replace(
        local_result, session_id=sid, duration_s=result.duration_s
    )
    # The handler was asked the same question, but for the tool call's raw update, which
    # the remote end rebuilds from the events.
    (asked,) = remote_handler.requests
    (local_asked,) = local_handler.requests
    assert msgspec.structs.replace(asked, tool_call=None, session_id="s") == (
        msgspec.structs.replace(local_asked, tool_call=None, session_id="s")
    )
    assert (asked.title, asked.kind, asked.call_id, asked.options) == (
        "Write a.txt",
        "edit",
        "t1",
        OPTIONS,
    )


async def test_without_a_handler_the_servers_preset_answers(tmp_path: Path) -> None:
    events, result, _ = await remote_turn(tmp_path, write_with_permission, None)
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert [e.option_id for e in resolved] == ["no"]  # "deny" picks reject_once
    assert result.answer == "Let me write it.\n\n Chose no."


async def test_a_handler_choosing_what_was_not_offered_denies(tmp_path: Path) -> None:
    events, result, _ = await remote_turn(tmp_path, write_with_permission, Asked("maybe"))
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == ["the permission handler chose 'maybe', which was not offered; denied"]
    assert result.answer == "Let me write it.\n\n Chose no."


async def test_cancel_while_the_handler_is_asking_ends_the_question(tmp_path: Path) -> None:
    asked, gave_up = anyio.Event(), anyio.Event()

    async def never_answers(request: PermissionRequest) -> str | None:
        asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            gave_up.set()
        return None  # pragma: no cover - never reached

    async with remote(tmp_path, write_with_permission) as (server, _):
        session = await server.new_session(
            "scripted", cwd=str(tmp_path), permission_handler=never_answers
        )
        async with session.prompt("write a.txt") as turn:
            async for event in turn:
                if isinstance(event, PermissionRequested):
                    await asked.wait()
                    await turn.cancel()
                if isinstance(event, PermissionResolved):
                    assert event.option_id is None
        await gave_up.wait()
    # This agent ends the turn its own way once its question is answered "cancelled".
    assert (turn.result.stop_reason, turn.result.answer) == (
        "end_turn",
        "Let me write it.\n\n Chose cancelled.",
    )


async def test_a_stream_dropped_mid_turn_resumes_with_every_event_once(tmp_path: Path) -> None:
    whole, _, unbroken = await remote_turn(tmp_path, count_to_ten, None, state="a")
    events, result, transport = await remote_turn(
        tmp_path, count_to_ten, None, cuts={0: 4, 1: 3}, state="b"
    )
    assert same_run(events) == same_run(whole)
    assert [e.text for e in events if isinstance(e, MessageDelta)] == [
        f"{n} " for n in range(1, 11)
    ]
    assert result.answer == "".join(f"{n} " for n in range(1, 11))
    # Cut after 4 messages (the 5th torn), then after 3 more: each reopening starts after
    # the last whole one.
    assert unbroken.streams == ["after=0"]
    assert transport.streams == ["after=0", "after=4", "after=7"]


async def test_a_stream_that_stays_down_raises_server_unreachable(tmp_path: Path) -> None:
    async with remote(tmp_path, count_to_ten, cuts={0: 6}, refuse=3) as (server, transport):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        kinds: list[str] = []

        async def read() -> None:
            async with session.prompt("count") as turn:
                async for event in turn:
                    kinds.append(event.type)  # noqa: PERF401 - each as it comes: the stream fails

        with pytest.raises(ServerUnreachable) as caught:
            await read()
    assert kinds == ["session_started", "user_message", "message_delta"]
    assert transport.streams == ["after=0", "after=6", "after=6"]
    assert caught.value.kind == "unreachable"
    assert str(caught.value) == (
        f"GET /v1/sessions/{session.id}/events: the event stream dropped and 2 "
        "reconnections failed (after seq 6)"
    )
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


async def test_a_prompt_of_content_blocks_reaches_the_agent_as_sent(tmp_path: Path) -> None:
    received: list[Any] = []

    async def keep(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        received.append(params["prompt"])
        return "end_turn"

    blocks: list[acp.ContentBlock] = [
        acp.TextContent(text="look at"),
        acp.ResourceLink(uri="file:///srv/a.txt", name="a.txt"),
    ]
    async with remote(tmp_path, keep) as (server, _):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        async with session.prompt(blocks) as turn:
            assert (await turn.wait()).stop_reason == "end_turn"
    assert received == [
        [
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///srv/a.txt", "name": "a.txt"},
        ]
    ]


async def test_cancel_ends_the_turn_with_stop_reason_cancelled(tmp_path: Path) -> None:
    async with remote(tmp_path, wait_for_cancel) as (server, _):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        async with session.prompt("work") as turn:
            seen: list[str] = []
            async for event in turn:
                seen.append(event.type)
                if isinstance(event, MessageDelta):
                    await turn.cancel()
        assert seen == [
            "session_started",
            "user_message",
            "message_delta",
            "turn_completed",
        ]
        assert (turn.result.ok, turn.result.stop_reason) == (False, "cancelled")
        await session.cancel()  # no turn runs: nothing


async def test_a_turn_another_client_cancels_ends_cancelled_and_the_next_starts_clean(
    tmp_path: Path,
) -> None:
    # A cancel this client did not ask for is held until the session's next state: the
    # server stopping the session would make it `crashed`; another client's cancel (the
    # page's) leaves it as it is.
    async with remote(tmp_path, wait_for_cancel) as (server, _):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        async with session.prompt("work") as turn:
            async for event in turn:
                if isinstance(event, MessageDelta):
                    await server.api.call("POST", f"{session.path}/cancel", Any)
        assert turn.result.error is not None
        assert (turn.result.stop_reason, turn.result.error.kind) == ("cancelled", "cancelled")
        async with session.prompt("again") as second:
            seen: list[str] = []
            async for event in second:
                seen.append(event.type)
                if isinstance(event, MessageDelta):
                    await second.cancel()
        assert seen == ["user_message", "message_delta", "turn_completed"]
        assert second.result.stop_reason == "cancelled"


async def test_leaving_a_turn_early_cancels_it_and_the_next_turn_starts_clean(
    tmp_path: Path,
) -> None:
    async with remote(tmp_path, wait_for_cancel) as (server, _):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        async with session.prompt("one") as turn:
            async for event in turn:
                if isinstance(event, MessageDelta):
                    break
        assert turn.result.stop_reason == "cancelled"
        session.server = server
        async with session.prompt("two") as second:
            kinds = []
            async for event in second:
                kinds.append(event.type)
                if isinstance(event, MessageDelta):
                    await second.cancel()
        assert kinds == ["user_message", "message_delta", "turn_completed"]


async def test_modes_settings_attach_and_close(tmp_path: Path) -> None:
    async with remote(tmp_path, count_to_ten) as (server, _):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        assert session.current_mode_id == "default"
        await session.set_mode("yolo")
        assert session.current_mode_id == "yolo"
        async with session.prompt("count") as turn:
            await turn.wait()
        again = await server.session(session.id)
        assert (again.id, again.session_id, again.current_mode_id) == (
            session.id,
            session.session_id,
            "yolo",
        )
        assert [e.type for e in await server.history(session.id)] == [
            "session_started",
            "user_message",
            *["message_delta"] * 10,
            "turn_completed",
        ]
        await session.close()
        (info,) = await server.sessions()
        assert (info.id, info.status) == (session.id, "closed")


async def test_a_turn_skips_the_turns_another_client_ran_meanwhile(tmp_path: Path) -> None:
    async with remote(tmp_path, count_to_ten) as (server, _):
        mine = await server.new_session("scripted", cwd=str(tmp_path))
        theirs = await server.session(mine.id)
        async with theirs.prompt("count") as turn:
            their_kinds = [event.type async for event in turn]
        async with mine.prompt("count") as turn:
            my_events = [event async for event in turn]
        logged = await server.history(mine.id)
    one_turn = ["user_message", *["message_delta"] * 10, "turn_completed"]
    assert their_kinds == one_turn
    assert [e.type for e in my_events] == ["session_started", *one_turn]
    assert [e.type for e in logged] == ["session_started", *one_turn, *one_turn]
    assert my_events[1:] == logged[-12:]


async def test_history_reads_past_the_servers_page_size(tmp_path: Path) -> None:
    async def chatter(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        for n in range(1005):
            await agent.say(sid, f"{n} ")
        return "end_turn"

    async with remote(tmp_path, chatter) as (server, _):
        session = await server.new_session("scripted", cwd=str(tmp_path))
        async with session.prompt("talk") as turn:
            events = [event async for event in turn]
        logged = await server.history(session.id)
    assert len(events) == 1 + 1 + 1005 + 1  # over the page size of 1000 envelopes
    assert logged == events


async def test_api_errors_are_typed(tmp_path: Path) -> None:
    async with remote(tmp_path, wait_for_cancel) as (server, _):
        with pytest.raises(RemoteError) as unknown_agent:
            await server.new_session("nope", cwd=str(tmp_path))
        assert (unknown_agent.value.kind, unknown_agent.value.status) == ("not_found", 404)
        for unknown in ("s_0000000000000000", "../agents"):
            with pytest.raises(RemoteError) as unknown_session:
                await server.session(unknown)
            assert (unknown_session.value.kind, unknown_session.value.status) == ("not_found", 404)
        session = await server.new_session("scripted", cwd=str(tmp_path))
        with pytest.raises(RemoteError) as bad_mode:
            await session.set_mode("nope")
        assert (bad_mode.value.kind, bad_mode.value.status) == ("bad_request", 400)
        async with session.prompt("work") as turn:
            async for event in turn:
                if isinstance(event, MessageDelta):
                    with pytest.raises(RemoteError) as busy:
                        async with session.prompt("again"):
                            pass
                    assert (busy.value.kind, busy.value.status) == ("conflict", 409)
                    await turn.cancel()
        with pytest.raises(RemoteError) as outside:
            await server.new_session("scripted", cwd="/")
        assert outside.value.status == 403


async def test_a_wrong_token_and_no_server_are_typed(tmp_path: Path) -> None:
    async with remote(tmp_path, count_to_ten) as (server, _):
        transport = server.api.http._transport
        async with connect(BASE, token="wrong", transport=transport) as wrong:
            with pytest.raises(RemoteError) as refused:
                await wrong.agents()
        assert (refused.value.kind, refused.value.status) == ("unauthorized", 401)
        assert [a.name for a in await server.agents()] == ["scripted"]

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with connect(BASE, token=TOKEN, transport=httpx.MockTransport(refuse)) as gone:
        with pytest.raises(ServerUnreachable) as unreachable:
            await gone.agents()
    assert isinstance(unreachable.value.__cause__, httpx.ConnectError)
    assert str(unreachable.value) == "GET /v1/agents: ConnectError('connection refused')"
