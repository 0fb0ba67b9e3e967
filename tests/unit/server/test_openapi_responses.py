"""Real answers checked against docs/openapi.json: every request below goes to a running
app (scripted agents), and each answer's status must be one the document lists for that
operation, its JSON valid against the schema it gives; the WebSocket's replies and
envelopes against `WsReply` and the envelope schemas. Every JSON operation of the session
routes is exercised (the test fails on one it leaves out), so a shape that drifts from
what a route sends fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from kit.server import Served, scripted_server

from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

DOCUMENT = json.loads((Path(__file__).parents[3] / "docs" / "openapi.json").read_text())
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


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    # The document's components beside the schema: its "#/components/..." refs resolve.
    return Draft202012Validator({**schema, "components": DOCUMENT["components"]})


def _operation(method: str, path: str) -> tuple[str, dict[str, Any]]:
    for template, operations in DOCUMENT["paths"].items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path) and method.lower() in operations:
            return f"{method} {template}", operations[method.lower()]
    raise AssertionError(f"{method} {path} is in no operation of the document")


class Checked:
    """The app, each answer checked against the document as it comes."""

    def __init__(self, server: Served) -> None:
        self.server = server
        self.seen: set[str] = set()

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = await self.server.request(method, path, **kwargs)
        name, operation = _operation(method, path.partition("?")[0])
        self.seen.add(name)
        documented = operation["responses"].get(str(response.status_code))
        assert documented is not None, f"{name} answered {response.status_code}: undocumented"
        content = documented.get("content", {})
        if response.headers["content-type"].startswith("application/json"):
            assert "application/json" in content, f"{name} {response.status_code}: no JSON"
            errors = list(_validator(content["application/json"]["schema"]).iter_errors(
                response.json()
            ))  # fmt: skip
            assert not errors, f"{name} {response.status_code}: {errors[0].message}"
        return response


def _check(name: str, value: Any) -> None:
    errors = list(_validator({"$ref": f"#/components/schemas/{name}"}).iter_errors(value))
    assert not errors, f"{name}: {errors[0].message} in {value}"


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
                    _check("EventEnvelope" if "event" in message else "StateEnvelope", message)
        for reply in replies:
            _check("WsReply", reply)
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
        _check("EventEnvelope" if "event" in envelope else "StateEnvelope", envelope)
    session_operations = {
        f"{method.upper()} {template}"
        for template, operations in DOCUMENT["paths"].items()
        for method, operation in operations.items()
        if "sessions" in operation["tags"] and not template.endswith("/ws")
    }
    assert session_operations - api.seen == set()
