"""Real answers of the session routes checked against docs/openapi.json (`kit.openapi_check`):
every request below goes to a running app (scripted agents), and each answer's status must
be one the document lists for that operation, its JSON valid against the schema it gives;
the WebSocket's replies and envelopes against `WsReply` and the envelope schemas. Every
JSON operation of the session routes is exercised (the test fails on one it leaves out), so
a shape that drifts from what a route sends fails here. (Saved sessions and batches:
test_openapi_responses_data.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kit.openapi_check import Checked, check, operations_tagged
from kit.server import scripted_server

from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

PERMISSION = {
    "toolCall": {"toolCallId": "t1", "title": "Write a.txt", "kind": "edit"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}


async def ask_permission(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.request("session/request_permission", {"sessionId": sid, **PERMISSION})
    await agent.say(sid, "Done.")
    return "end_turn"


async def test_every_answer_is_what_the_document_says(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "home").mkdir()
    root, state = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(
        root, state, on_prompt=ask_permission, sessions_home=str(tmp_path / "home")
    ) as (server, _):
        api = Checked(server)
        for path in ("/health", "/ready", "/v1/agents", "/v1/roots", "/v1/sessions"):
            assert (await api.call("GET", path)).status_code == 200
        assert (await api.call("POST", "/v1/sessions", json={"agent": "nope"})).status_code == 404
        assert (await api.call("POST", "/v1/sessions", json={"bogus": 1})).status_code == 400
        created = await api.call("POST", "/v1/sessions", json={"agent": "scripted"})
        assert created.status_code == 201
        sid = created.json()["id"]
        base = f"/v1/sessions/{sid}"
        assert (await api.call("GET", base)).status_code == 200
        assert (await api.call("GET", "/v1/sessions/s_0000000000000000")).status_code == 404
        assert (await api.call("GET", "/v1/sessions")).json()["sessions"][0]["id"] == sid
        assert (await api.call("POST", f"{base}/cancel")).status_code == 409
        assert (await api.call("POST", f"{base}/mode", json={"mode_id": "yolo"})).status_code == 200
        assert (await api.call("POST", f"{base}/mode", json={"mode_id": "x"})).status_code == 400
        await api.call("POST", f"{base}/model", json={"model_id": "m"})
        config = {"config_id": "c", "value": True}
        assert (await api.call("POST", f"{base}/config", json=config)).status_code == 400
        both = {"text": "a", "prompt": []}
        assert (await api.call("POST", f"{base}/prompt", json=both)).status_code == 400
        async with server.sse(f"{base}/events") as stream:
            assert (
                await api.call("POST", f"{base}/prompt", json={"text": "go"})
            ).status_code == 202
            while '"permission_requested"' not in stream.raw.decode():
                await stream.wait_for(len(stream.envelopes()) + 1)
            answer = {"option_id": "yes"}
            path = f"{base}/permissions/0"
            assert (await api.call("POST", path, json=answer)).status_code == 200
            assert (await api.call("POST", path, json=answer)).status_code == 409
            while '"turn_completed"' not in stream.raw.decode():
                await stream.wait_for(len(stream.envelopes()) + 1)
            streamed = stream.envelopes()
        json_events = await api.call(
            "GET", f"{base}/events", headers={"Accept": "application/json"}
        )
        assert json_events.json()["events"] == streamed
        async with server.ws(f"{base}/ws?after=0") as ws:
            frames = [{"op": "cancel"}, {"op": "hover"}, {"op": "permission"}, {"op": "prompt"}]
            for frame in frames:
                await ws.send_text(json.dumps(frame))
            replies: list[dict[str, Any]] = []
            while len(replies) < len(frames):
                message = json.loads(await ws.receive_text())
                if "reply" in message:
                    replies.append(message)
                else:
                    check("EventEnvelope" if "event" in message else "StateEnvelope", message)
        for reply in replies:
            check("WsReply", reply)
        assert [(r["reply"], r["ok"]) for r in replies] == [
            ("cancel", False), (None, False), (None, False), ("prompt", False),
        ]  # fmt: skip
        assert replies[1]["error"]["message"] == "unknown op 'hover': prompt, permission or cancel"
        await api.call("GET", "/v1/saved-sessions")
        await api.call("GET", "/v1/saved-sessions/search?text=go")
        await api.call("GET", "/v1/usage")
        await api.call("GET", "/v1/batches")
        assert (await api.call("GET", "/v1/batches/b_0000000000000000")).status_code == 404
        assert (await api.call("DELETE", base)).json()["status"] == "closed"
        assert (await api.call("GET", "/openapi.json")).status_code == 200
        refused = await server.http.get("/v1/sessions", headers={"Authorization": "Bearer no"})
        assert refused.status_code == 401
    for envelope in streamed:
        check("EventEnvelope" if "event" in envelope else "StateEnvelope", envelope)
    websocket = "GET /v1/sessions/{session_id}/ws"
    assert operations_tagged("sessions") - {websocket} - api.seen == set()
