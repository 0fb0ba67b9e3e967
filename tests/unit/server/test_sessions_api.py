"""The sessions API over scripted agents in this process: envelopes, replay, permissions,
cancel, conflicts, limits, restart, shutdown. No process is started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self

import anyio
import pytest
from httpx_ws import WebSocketDisconnect
from kit.server import TOKEN, Served, scripted_server

from gemwire.errors import AgentNotFound
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio


async def say_hello(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, "Hello")
    return "end_turn"


async def echo(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, params["prompt"][0]["text"])
    return "end_turn"


PERMISSION = {
    "toolCall": {"toolCallId": "t1", "title": "Write a.txt", "kind": "edit"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}

answers: list[dict[str, Any]] = []


async def ask_permission(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    params = {"sessionId": sid, **PERMISSION}
    answers.append(await agent.request("session/request_permission", params))
    await agent.update(sid, "tool_call_update", toolCallId="t1", status="completed")
    return "end_turn"


async def wait_for_cancel(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, "Working")
    await agent.cancelled.wait()
    return "cancelled"


def kinds(envelopes: list[dict[str, Any]]) -> list[str]:
    return [
        e["event"]["type"] if "event" in e else f"state:{e['state']['status']}" for e in envelopes
    ]


async def new_session(server: Served, **fields: Any) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": "scripted", **fields})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def logged(server: Served, sid: str, after: int = 0) -> list[dict[str, Any]]:
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events?after={after}", headers={"Accept": "application/json"}
    )
    assert response.status_code == 200
    return list(response.json()["events"])


async def wait_logged(server: Served, sid: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """The log once it holds ``count`` envelopes of ``kind`` (polled: the log is the truth)."""
    while True:
        envelopes = await logged(server, sid)
        if kinds(envelopes).count(kind) >= count:
            return envelopes
        await anyio.sleep(0.01)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    root = tmp_path / "root"
    root.mkdir()
    return str(root.resolve()), str(tmp_path / "state")


async def test_a_session_is_created_with_its_fields(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        assert response.status_code == 201
        view = response.json()
        created = view.pop("created")
        assert created.endswith("Z")
        assert view == {
            "id": view["id"],
            "agent": "scripted",
            "cwd": dirs[0],
            "agent_session_id": view["agent_session_id"],
            "status": "idle",
            "title": None,
            "last_seq": 3,
            "modes": [{"id": "default", "name": "Default"}, {"id": "yolo", "name": "YOLO"}],
            "current_mode": "default",
            "models": None,
            "current_model": None,
            "config_options": None,
            "commands": None,
            "usage": None,
            "pending_permissions": [],
        }
        assert view["id"].startswith("s_")
        assert len(view["id"]) == 18
        listed = (await server.request("GET", "/v1/sessions")).json()["sessions"]
        assert [s["id"] for s in listed] == [view["id"]]
        assert (await server.request("GET", f"/v1/sessions/{view['id']}")).json()[
            "status"
        ] == "idle"
        assert (await server.request("GET", "/v1/roots")).json() == {"roots": [dirs[0]]}


@pytest.mark.parametrize(
    ("body", "status", "kind"),
    [
        ({"agent": "nope"}, 404, "not_found"),
        ({"agent": "scripted", "cwd": "/"}, 403, "forbidden"),
        ({"agent": "scripted", "cwd": "../"}, 403, "forbidden"),
        ({"agent": "scripted", "cwd": "missing"}, 400, "bad_request"),
        ({"agent": "scripted", "permissions": "maybe"}, 400, "bad_request"),
        ({"agent": "scripted", "surprise": 1}, 400, "bad_request"),
        ({"agent": "scripted", "mode": "warp"}, 400, "bad_request"),
    ],
)
async def test_a_bad_session_request_is_refused_and_leaves_nothing(
    dirs: tuple[str, str], body: dict[str, Any], status: int, kind: str
) -> None:
    async with scripted_server(*dirs) as (server, launcher):
        response = await server.request("POST", "/v1/sessions", json=body)
        assert (response.status_code, response.json()["error"]["kind"]) == (status, kind)
        assert (await server.request("GET", "/v1/sessions")).json() == {"sessions": []}
    assert list((Path(dirs[1]) / "sessions").iterdir()) == []
    assert all(agent.channel._link.closed[0].is_set() for agent in launcher.started)


@pytest.mark.parametrize(
    ("body", "path", "message"),
    [
        (
            b'{"agent": "\xff"}',
            "/v1/sessions",
            "the request body is not JSON: invalid UTF-8 in a JSON string (invalid start byte)",
        ),
        (
            b'{"prompt": [{"type": "text", "text": "x", "_meta": '
            + b'{"a": ' * 100_000
            + b"1"
            + b"}" * 100_000
            + b"}]}",
            "/v1/sessions/s_0123456789abcdef/prompt",
            "the request body is not JSON: nested too deeply to decode",
        ),
        (
            rb'{"text": "cut \ud83d"}',
            "/v1/sessions/s_0123456789abcdef/prompt",
            (
                "the request body is not JSON gemwire can read: it holds 1 lone UTF-16 surrogate "
                r"(an escape such as \ud83d without the other half of its pair); send whole "
                "characters"
            ),
        ),
    ],
)
async def test_a_body_that_cannot_be_decoded_is_a_400_not_a_500(
    dirs: tuple[str, str], body: bytes, path: str, message: str
) -> None:
    async with scripted_server(*dirs) as (server, _):
        response = await server.request("POST", path, content=body)
        assert (response.status_code, response.json()) == (
            400,
            {"error": {"kind": "bad_request", "message": message}},
        )


async def test_a_symlink_out_of_the_root_is_refused(dirs: tuple[str, str], tmp_path: Path) -> None:
    (Path(dirs[0]) / "out").symlink_to(tmp_path)
    async with scripted_server(*dirs) as (server, launcher):
        response = await server.request(
            "POST", "/v1/sessions", json={"agent": "scripted", "cwd": "out"}
        )
        assert response.status_code == 403
        assert launcher.started == []


async def test_a_turn_streams_envelopes_with_consecutive_seqs(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=say_hello) as (server, _):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            response = await server.request(
                "POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"}
            )
            assert (response.status_code, response.json()) == (202, {"after": 3})
            envelopes = await stream.wait_for(8)
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert [e["seq"] for e in envelopes] == list(range(1, 9))
        assert kinds(envelopes) == [
            "state:starting",
            "session_started",
            "state:idle",
            "state:running",
            "user_message",
            "message_delta",
            "turn_completed",
            "state:idle",
        ]
        messages = [m for m in stream.messages() if m.get("event") == "gemwire"]
        assert [m["id"] for m in messages] == [str(n) for n in range(1, 9)]
        assert envelopes[6]["event"]["answer"] == "Hello"
        assert envelopes == await logged(server, sid)
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
        assert (view["title"], view["last_seq"], view["status"]) == ("hi", 8, "idle")


async def test_after_n_replays_each_envelope_exactly_once_across_a_reconnect(
    dirs: tuple[str, str],
) -> None:
    async with scripted_server(*dirs, on_prompt=echo) as (server, _):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as first:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "one"})
            seen = await first.wait_for(8)
        # Disconnected: a second turn runs with nobody listening.
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "two"})
        await wait_logged(server, sid, "turn_completed", 2)
        last = seen[-1]["seq"]
        async with server.sse(
            f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": str(last)}
        ) as second:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "three"})
            rest = await second.wait_for(18 - last)
        async with server.sse(f"/v1/sessions/{sid}/events?after=16") as third:
            tail = await third.wait_for(2)
    seqs = [e["seq"] for e in seen + rest]
    assert seqs == list(range(1, 19))
    texts = [e["event"]["text"] for e in seen + rest if kinds([e]) == ["message_delta"]]
    assert texts == ["one", "two", "three"]
    assert [e["seq"] for e in tail] == [17, 18]


async def test_the_json_form_pages_the_log(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=say_hello) as (server, _):
        sid = await new_session(server)
        response = await server.request(
            "GET",
            f"/v1/sessions/{sid}/events?after=1&limit=1",
            headers={"Accept": "application/json"},
        )
        assert response.json() == {
            "events": [
                {
                    "seq": 2,
                    "event": {
                        "type": "session_started",
                        "agent": "acp:scripted",
                        "session_id": response.json()["events"][0]["event"]["session_id"],
                        "model": None,
                        "cwd": dirs[0],
                        "agent_version": "1.0",
                    },
                }
            ],
            "last_seq": 3,
        }
        # Not ASCII digits, or too many for int() to take: 400 (a superscript two is a
        # str.isdigit() digit that int() refuses; 5000 digits are over its limit).
        for after in ("x", "\u00b2", "9" * 5000):
            bad = await server.request("GET", f"/v1/sessions/{sid}/events?after={after}")
            assert (bad.status_code, bad.json()["error"]) == (
                400,
                {
                    "kind": "bad_request",
                    "message": f"after must be a sequence number, not {after[:40]!r}",
                },
            ), after


async def test_a_permission_is_answered_over_http(dirs: tuple[str, str]) -> None:
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission) as (server, _):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            envelopes = await stream.wait_for(7)
            requested = envelopes[6]["event"]
            assert requested["type"] == "permission_requested"
            view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
            assert view["pending_permissions"] == [requested]
            url = f"/v1/sessions/{sid}/permissions/{requested['request_id']}"
            wrong = await server.request("POST", url, json={"option_id": "maybe"})
            assert wrong.status_code == 400
            assert wrong.json()["error"]["message"] == (
                "'maybe' was not offered; one of ['yes', 'no'] or null"
            )
            unknown = await server.request(
                "POST", f"/v1/sessions/{sid}/permissions/99", json={"option_id": "yes"}
            )
            assert unknown.status_code == 404
            right = await server.request("POST", url, json={"option_id": "yes"})
            assert (right.status_code, right.json()) == (
                200,
                {"request_id": "0", "option_id": "yes"},
            )
            envelopes = await stream.wait_for(11)
        assert kinds(envelopes)[4:] == [
            "user_message",
            "tool_call_started",
            "permission_requested",
            "permission_resolved",
            "tool_call_finished",
            "turn_completed",
            "state:idle",
        ]
        assert (envelopes[7]["event"]["request_id"], envelopes[7]["event"]["option_id"]) == (
            "0",
            "yes",
        )
        outcome = {"outcome": "selected", "optionId": "yes"}
        assert answers == [{"jsonrpc": "2.0", "id": 0, "result": {"outcome": outcome}}]
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
        assert view["pending_permissions"] == []


async def test_with_no_subscriber_a_permission_is_denied_at_once(dirs: tuple[str, str]) -> None:
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission) as (server, _):
        sid = await new_session(server)
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
        envelopes = await wait_logged(server, sid, "turn_completed")
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"outcome": {"outcome": "selected", "optionId": "no"}},
        }
    ]
    resolved = [e["event"] for e in envelopes if kinds([e]) == ["permission_resolved"]]
    assert [r["option_id"] for r in resolved] == ["no"]


async def test_a_preset_answers_by_itself_even_with_a_subscriber(dirs: tuple[str, str]) -> None:
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission) as (server, _):
        sid = await new_session(server, permissions="edits")
        async with server.sse(f"/v1/sessions/{sid}/events"):
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            await wait_logged(server, sid, "turn_completed")
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "yes"}


async def test_an_unanswered_permission_is_denied_after_the_timeout(dirs: tuple[str, str]) -> None:
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission, permission_timeout=0.01) as (
        server,
        _,
    ):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events"):
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            envelopes = await wait_logged(server, sid, "turn_completed")
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "no"}
    notices = [e["event"]["message"] for e in envelopes if kinds([e]) == ["notice"]]
    assert notices == ["permission request 0 denied: no client (no client answered within 0.01 s)"]


async def test_cancel_ends_the_turn_once_and_conflicts_are_409(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=wait_for_cancel) as (server, launcher):
        sid = await new_session(server)
        nothing = await server.request("POST", f"/v1/sessions/{sid}/cancel")
        assert (nothing.status_code, nothing.json()["error"]["kind"]) == (409, "conflict")
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
        await wait_logged(server, sid, "message_delta")
        again = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "more"})
        assert again.status_code == 409
        assert again.json()["error"]["message"] == f"a turn is running in session {sid}"
        cancelled = await server.request("POST", f"/v1/sessions/{sid}/cancel")
        assert cancelled.status_code == 202
        envelopes = await wait_logged(server, sid, "turn_completed")
        await wait_logged(server, sid, "state:idle", 2)
        envelopes = await logged(server, sid)
    assert kinds(envelopes)[3:] == [
        "state:running",
        "user_message",
        "message_delta",
        "turn_completed",
        "state:idle",
    ]
    assert envelopes[6]["event"]["stop_reason"] == "cancelled"
    sent = [m for m in launcher.started[0].received if m.get("method") == "session/cancel"]
    assert len(sent) == 1


async def test_modes_are_set_and_unknown_ones_refused(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = await new_session(server)
        ok = await server.request("POST", f"/v1/sessions/{sid}/mode", json={"mode_id": "yolo"})
        assert (ok.status_code, ok.json()["current_mode"]) == (200, "yolo")
        bad = await server.request("POST", f"/v1/sessions/{sid}/mode", json={"mode_id": "warp"})
        assert bad.status_code == 400
        model = await server.request("POST", f"/v1/sessions/{sid}/model", json={"model_id": "m"})
        assert model.status_code == 400
        config = await server.request(
            "POST", f"/v1/sessions/{sid}/config", json={"config_id": "c", "value": "v"}
        )
        assert (config.status_code, config.json()["error"]["message"]) == (
            400,
            "the agent offers no option 'c'; its options: []",
        )
        number = await server.request(
            "POST", f"/v1/sessions/{sid}/config", json={"config_id": "c", "value": 1}
        )
        assert (number.status_code, number.json()["error"]["message"]) == (
            400,
            "invalid request body: Expected `bool | str`, got `int` - at `$.value`",
        )


async def test_delete_stops_the_agent_and_keeps_the_log(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=say_hello) as (server, launcher):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            deleted = await server.request("DELETE", f"/v1/sessions/{sid}")
            assert (deleted.status_code, deleted.json()["status"]) == (200, "closed")
            with anyio.fail_after(5):
                await stream.ended.wait()  # the stream ends with the session
        assert kinds(stream.envelopes())[-2:] == ["state:idle", "state:closed"]
        after = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
        assert after.status_code == 409
        assert launcher.started[0].channel._link.closed[0].is_set()  # the client closed it
    record = json.loads((Path(dirs[1]) / "sessions" / sid / "session.json").read_text())
    assert record["closed"] is True


async def test_too_many_sessions_is_429(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, max_sessions=2) as (server, _):
        await new_session(server)
        await new_session(server)
        third = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        assert third.status_code == 429
        assert third.json()["error"] == {
            "kind": "limit",
            "message": "2 sessions run an agent (--max-sessions 2): close one (DELETE "
            "/v1/sessions/{id}) or wait for one to stop (an idle session stops after "
            "--idle-timeout 3600 s)",
        }


async def test_an_idle_session_stops_and_a_prompt_continues_it(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=echo, idle_timeout=0.05) as (server, launcher):
        sid = await new_session(server)
        envelopes = await wait_logged(server, sid, "state:stopped")
        assert envelopes[-1] == {"seq": 4, "state": {"status": "stopped", "detail": "idle timeout"}}
        assert (await server.request("GET", f"/v1/sessions/{sid}")).json()["status"] == "stopped"
        response = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "back"})
        assert response.json() == {"after": 7}
        envelopes = await wait_logged(server, sid, "turn_completed")
        loads = [m for m in launcher.started[1].received if m.get("method") == "session/load"]
        assert [m["params"]["sessionId"] for m in loads] == [envelopes[1]["event"]["session_id"]]
    assert kinds(envelopes)[4:11] == [
        "state:starting",
        "session_started",
        "state:idle",
        "state:running",
        "user_message",
        "message_delta",
        "turn_completed",
    ]


async def test_a_restarted_server_lists_and_continues_its_sessions(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=echo) as (server, _):
        sid = await new_session(server)
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "one"})
        await wait_logged(server, sid, "turn_completed")
    async with scripted_server(*dirs, on_prompt=echo) as (server, launcher):
        listed = (await server.request("GET", "/v1/sessions")).json()["sessions"]
        assert [(s["id"], s["status"], s["title"]) for s in listed] == [(sid, "stopped", "one")]
        stopped_at = listed[0]["last_seq"]
        assert stopped_at == 9  # the turn (4-7), idle, then stopped at shutdown
        response = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "two"})
        assert response.json() == {"after": stopped_at + 3}
        envelopes = await wait_logged(server, sid, "turn_completed", 2)
        assert [e["seq"] for e in envelopes] == list(range(1, len(envelopes) + 1))
        load = [m for m in launcher.started[0].received if m.get("method") == "session/load"]
        assert load[0]["params"]["sessionId"] == listed[0]["agent_session_id"]


async def test_shutdown_ends_a_running_turn_with_one_turn_completed(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=wait_for_cancel) as (server, _):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            await stream.wait_for(6)
            sessions = server.app.state.gemwire.sessions
            await sessions.drain()
            with anyio.fail_after(5):
                await stream.ended.wait()
    assert kinds(stream.envelopes())[3:] == [
        "state:running",
        "user_message",
        "message_delta",
        "turn_completed",
        "state:stopped",
    ]
    completed = [e["event"] for e in stream.envelopes() if kinds([e]) == ["turn_completed"]]
    assert [c["stop_reason"] for c in completed] == ["cancelled"]
    assert stream.envelopes()[-1]["state"] == {"status": "stopped", "detail": "server shutdown"}
    lines = (Path(dirs[1]) / "sessions" / sid / "events.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == stream.envelopes()


async def test_twenty_sessions_at_once_see_only_their_own_events(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=echo) as (server, _):
        sids = [await new_session(server) for _ in range(20)]
        async with anyio.create_task_group() as tg:
            for n, sid in enumerate(sids):
                tg.start_soon(
                    lambda sid, n: server.request(
                        "POST", f"/v1/sessions/{sid}/prompt", json={"text": f"task {n}"}
                    ),
                    sid,
                    n,
                )
        for n, sid in enumerate(sids):
            envelopes = await wait_logged(server, sid, "turn_completed")
            events = [e["event"] for e in envelopes if "event" in e]
            assert [e["text"] for e in events if e["type"] == "message_delta"] == [f"task {n}"]
            assert len({e["session_id"] for e in events}) == 1


async def test_the_token_is_masked_in_events(dirs: tuple[str, str]) -> None:
    async def leak(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.say(sid, f"the token is {TOKEN}")
        return "end_turn"

    async with scripted_server(*dirs, on_prompt=leak) as (server, _):
        sid = await new_session(server)
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
        envelopes = await wait_logged(server, sid, "turn_completed")
    deltas = [e["event"]["text"] for e in envelopes if kinds([e]) == ["message_delta"]]
    assert deltas == ["the token is ***"]
    assert TOKEN not in (Path(dirs[1]) / "sessions" / sid / "events.jsonl").read_text()


async def test_the_websocket_streams_and_takes_ops(dirs: tuple[str, str]) -> None:
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission) as (server, _):
        sid = await new_session(server)
        async with server.ws(f"/v1/sessions/{sid}/ws?after=3") as ws:
            await ws.send_text(json.dumps({"op": "prompt", "text": "go"}))
            received: list[dict[str, Any]] = []
            while not any(kinds([r]) == ["permission_requested"] for r in received if "seq" in r):
                received.append(json.loads(await ws.receive_text()))
            replies = [r for r in received if "reply" in r]
            assert replies == [{"reply": "prompt", "ok": True, "after": 3}]
            await ws.send_text(
                json.dumps({"op": "permission", "request_id": "0", "option_id": "nope"})
            )
            await ws.send_text(
                json.dumps({"op": "permission", "request_id": "0", "option_id": "yes"})
            )
            while not any(kinds([r]) == ["turn_completed"] for r in received if "seq" in r):
                received.append(json.loads(await ws.receive_text()))
            await ws.send_text(json.dumps({"op": "cancel"}))
            while not any(r.get("reply") == "cancel" for r in received):
                received.append(json.loads(await ws.receive_text()))
    replies = [r for r in received if "reply" in r]
    assert replies[0] == {"reply": "prompt", "ok": True, "after": 3}
    assert (replies[1]["reply"], replies[1]["ok"], replies[1]["error"]["kind"]) == (
        "permission",
        False,
        "bad_request",
    )
    assert replies[2:] == [
        {"reply": "permission", "ok": True},
        {
            "reply": "cancel",
            "ok": False,
            "error": {"kind": "conflict", "message": f"no turn runs in session {sid}"},
        },
    ]
    seqs = [r["seq"] for r in received if "seq" in r]
    assert seqs == list(range(4, 4 + len(seqs)))
    assert kinds([r for r in received if "seq" in r])[-2:] == ["turn_completed", "state:idle"]
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "yes"}


async def test_a_torn_log_line_is_dropped_with_a_notice_on_restart(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = await new_session(server)
    log = Path(dirs[1]) / "sessions" / sid / "events.jsonl"
    with log.open("ab") as file:
        file.write(b'{"seq":5,"event":{"ty')
    async with scripted_server(*dirs) as (server, _):
        envelopes = await logged(server, sid)
    assert [e["seq"] for e in envelopes] == [1, 2, 3, 4, 5]
    assert envelopes[-1]["event"]["message"] == (
        "the end of this session's log was torn (the server stopped while writing it): "
        "that line was dropped"
    )
    assert envelopes[-1]["event"]["agent"] == "server:scripted"


async def test_a_stopped_session_of_an_agent_that_cannot_load_is_409(
    dirs: tuple[str, str],
) -> None:
    async with scripted_server(*dirs, loads=False, idle_timeout=0.05) as (server, _):
        sid = await new_session(server)
        await wait_logged(server, sid, "state:stopped")
        response = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
        assert response.status_code == 409
        assert response.json()["error"]["message"] == (
            f"acp:scripted cannot load sessions (no loadSession): session {sid} cannot be continued"
        )
        envelopes = await logged(server, sid)
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
    assert kinds(envelopes)[-2:] == ["state:starting", "state:stopped"]
    assert view["status"] == "stopped"
    again = [e for e in envelopes if e.get("state", {}).get("status") == "stopped"]
    assert again[-1]["state"]["detail"].startswith("acp:scripted cannot load sessions")


async def test_a_waiting_permission_is_denied_when_the_last_client_leaves(
    dirs: tuple[str, str],
) -> None:
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission, permission_grace=0) as (
        server,
        _,
    ):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            await stream.wait_for(7)  # permission_requested: it waits for an answer
        envelopes = await wait_logged(server, sid, "turn_completed")
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "no"}
    resolved = [e["event"] for e in envelopes if kinds([e]) == ["permission_resolved"]]
    assert [r["option_id"] for r in resolved] == ["no"]


async def test_a_client_back_within_the_grace_finds_the_permission_open_and_answers(
    dirs: tuple[str, str],
) -> None:
    """A page reloaded with the dialog open: the request outlives its last subscriber."""
    answers.clear()
    async with scripted_server(*dirs, on_prompt=ask_permission, permission_grace=3600) as (
        server,
        _,
    ):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            requested = (await stream.wait_for(7))[6]["event"]
        await anyio.wait_all_tasks_blocked()
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
        assert (view["status"], view["pending_permissions"]) == ("running", [requested])
        async with server.sse(f"/v1/sessions/{sid}/events") as again:
            replayed = await again.wait_for(7)
            assert kinds(replayed)[-1] == "permission_requested"
            url = f"/v1/sessions/{sid}/permissions/{requested['request_id']}"
            answered = await server.request("POST", url, json={"option_id": "yes"})
            assert answered.status_code == 200
            envelopes = await again.wait_for(11)
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "yes"}
    assert kinds(envelopes)[6:] == [
        "permission_requested",
        "permission_resolved",
        "tool_call_finished",
        "turn_completed",
        "state:idle",
    ]
    assert envelopes[7]["event"]["option_id"] == "yes"


async def test_ready_is_503_once_shutdown_began(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        assert (await server.request("GET", "/ready")).json() == {"ready": True}
        await server.app.state.gemwire.sessions.drain()
        server.app.state.gemwire.shutting_down.set()
        response = await server.request("GET", "/ready")
        assert (response.status_code, response.json()) == (503, {"ready": False})
        refused = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        assert (refused.status_code, refused.json()["error"]) == (
            503,
            {"kind": "limit", "message": "the server is shutting down"},
        )


class _Missing:
    """A channel whose agent cannot be started."""

    framing = "messages"

    async def __aenter__(self) -> Self:
        raise AgentNotFound("no such program: my-agent")

    async def __aexit__(self, *exc_info: object) -> None:
        return None


async def test_an_agent_that_cannot_start_is_404_and_leaves_no_session(
    dirs: tuple[str, str],
) -> None:
    async with scripted_server(*dirs) as (server, launcher):
        launcher.channel = lambda options: _Missing()  # type: ignore[method-assign,assignment,return-value]
        response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        assert (response.status_code, response.json()["error"]) == (
            404,
            {
                "kind": "not_found",
                "message": "the agent could not be started: no such program: my-agent",
            },
        )
        assert (await server.request("GET", "/v1/sessions")).json() == {"sessions": []}
    assert list((Path(dirs[1]) / "sessions").iterdir()) == []


async def test_an_agent_that_dies_mid_turn_ends_it_once_and_a_prompt_continues(
    dirs: tuple[str, str],
) -> None:
    async def die(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        if params["prompt"][0]["text"] == "die":
            await agent.say(sid, "partial")
            await agent.channel.close(0, reason="out of memory")
        else:
            await agent.say(sid, "alive")
        return "end_turn"

    async with scripted_server(*dirs, on_prompt=die) as (server, launcher):
        sid = await new_session(server)
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "die"})
        envelopes = await wait_logged(server, sid, "state:stopped")
        assert kinds(envelopes)[3:] == [
            "state:running",
            "user_message",
            "message_delta",
            "turn_completed",
            "state:stopped",
        ]
        completed = envelopes[6]["event"]
        assert (completed["ok"], completed["error"]["kind"]) == (False, "crashed")
        assert envelopes[-1]["state"] == {"status": "stopped", "detail": "the agent exited"}
        again = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
        assert again.status_code == 202
        envelopes = await wait_logged(server, sid, "turn_completed", 2)
        assert len(launcher.started) == 2
    last = [e["event"] for e in envelopes if kinds([e]) == ["turn_completed"]][-1]
    assert (last["ok"], last["answer"]) == (True, "alive")


@pytest.mark.parametrize(
    "path", ["/v1/sessions/s_0123456789abcdef/ws", "/v1/sessions/x/ws?after=-1"]
)
async def test_a_websocket_to_no_session_is_closed_1008(dirs: tuple[str, str], path: str) -> None:
    async with scripted_server(*dirs) as (server, _):
        if "after" in path:
            path = f"/v1/sessions/{await new_session(server)}/ws?after=-1"
        with pytest.raises(WebSocketDisconnect) as caught:
            async with server.ws(path):
                pass
    assert caught.value.code == 1008


async def test_a_binary_frame_on_the_websocket_is_answered_with_an_error(
    dirs: tuple[str, str],
) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = await new_session(server)
        async with server.ws(f"/v1/sessions/{sid}/ws?after=3") as ws:
            await ws.send_bytes(b'{"op": "cancel"}')
            binary = json.loads(await ws.receive_text())
            await ws.send_text(json.dumps({"op": "cancel"}))
            text = json.loads(await ws.receive_text())
    assert binary == {
        "reply": None,
        "ok": False,
        "error": {
            "kind": "bad_request",
            "message": "ops are JSON in text frames: a binary frame was not read",
        },
    }
    assert (text["reply"], text["error"]["kind"]) == ("cancel", "conflict")  # still open


async def test_a_lone_surrogate_in_a_websocket_op_is_said_as_such(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = await new_session(server)
        async with server.ws(f"/v1/sessions/{sid}/ws?after=3") as ws:
            await ws.send_text(r'{"op": "prompt", "text": "\udc00"}')
            reply = json.loads(await ws.receive_text())
    assert reply["error"]["message"] == (
        r"not JSON gemwire can read: it holds 1 lone UTF-16 surrogate (an escape such as "
        r"\ud83d without the other half of its pair); send whole characters"
    )
