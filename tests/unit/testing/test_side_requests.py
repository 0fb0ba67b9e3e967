"""Claude Code's prompt-suggestion request after a turn (claude-agent-acp 0.101.0) is streamed
like a turn, tools and all: the scripted model answers it as a side call, consumes no turn,
and lists it in ``requests``, never in ``problems``."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from gemwire.testing import Reply, Scenario, ScriptedModel, Text

TOOLS = [{"name": "Write", "input_schema": {"type": "object"}}]


def body(last: str) -> dict[str, Any]:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "First."}]},
        {"role": "user", "content": last},
    ]
    return {"model": "claude-opus-5-5", "stream": True, "tools": TOOLS, "messages": messages}


def request(model: ScriptedModel, path: str, body: Any) -> tuple[int, bytes]:
    host = urlsplit(model.url)
    conn = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
    try:
        conn.request("POST", path, body=json.dumps(body))
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def texts(data: bytes) -> str:
    """The text the stream's deltas carry."""
    events = [
        json.loads(line[len("data: ") :])
        for line in data.decode().splitlines()
        if line.startswith("data: ")
    ]
    deltas = [e["delta"] for e in events if e.get("type") == "content_block_delta"]
    return "".join(d.get("text", "") for d in deltas)


def test_a_prompt_suggestion_takes_no_turn_and_is_no_problem() -> None:
    suggestion = "[SUGGESTION MODE: Suggest what the user might naturally type next.]"
    with ScriptedModel(Scenario(turns=[Reply([Text("Second.")])])) as model:
        status, asked = request(model, "/v1/messages", body(suggestion))
        assert status == 200
        status, turn = request(model, "/v1/messages", body("and now?"))
        assert status == 200
        assert (texts(asked), texts(turn)) == ("", "Second.")
        assert [(r.rpc, r.turn) for r in model.requests] == [("messages", None), ("messages", 0)]
        assert model.problems == []
        assert model.turns_left == 0
        assert model.requests[0].body["messages"][-1]["content"] == suggestion
