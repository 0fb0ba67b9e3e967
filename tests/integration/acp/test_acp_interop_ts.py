"""The ACP TypeScript SDK 2.4.0's own clients (npm ``@agentclientprotocol/sdk``, pinned in
clis/acp-sdk-ts-2.4.0; an implementation we did not write) through the seven steps
against gemwire's ACP endpoint at ``/acp``, over WebSocket and Streamable HTTP:
initialize, session/new, a streamed prompt, a permission round trip, cancel, session/load
on a new connection (its replay on the session's stream) and a prompt on the loaded
session. The agent is tests/served.py's scripted one (`LoadingAgent`), in process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from acp_scripted import ScriptedAgent
from served import LoadingAgent, ScriptedChannel, serve_asgi

from gemwire.server.acp_endpoint import AcpEndpoint

SDK = Path(__file__).parents[3] / "clis" / "acp-sdk-ts-2.4.0"
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (SDK / "node_modules").is_dir(),
    reason="the ACP TypeScript SDK is installed by `make agents` (clis/acp-sdk-ts-2.4.0)",
)


async def _turn(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    """``hello`` says hello; ``permission`` asks for one; ``hang`` waits for the cancel."""
    text = params["prompt"][0]["text"]
    if text == "permission":
        tool_call = {"toolCallId": "t1", "title": "write a", "kind": "edit"}
        options = [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ]
        answer = await agent.request(
            "session/request_permission",
            {"sessionId": session_id, "toolCall": tool_call, "options": options},
        )
        await agent.say(session_id, answer["result"]["outcome"]["optionId"])
        return "end_turn"
    if text == "hang":
        await agent.say(session_id, "Thinking")
        await agent.cancelled.wait()
        return "cancelled"
    await agent.say(session_id, "Hello there.")
    return "end_turn"


class _Agent(LoadingAgent):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.capabilities = {"loadSession": True}


def _steps(url: str, transport: str, cwd: str) -> list[dict[str, Any]]:
    command = ["node", *(["--experimental-websocket"] if transport == "ws" else []), "client.mjs"]
    done = subprocess.run(
        [*command, url, transport, cwd],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
        check=False,
    )
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, (steps, done.stderr[-2000:])
    return steps


EXPECTED = [
    {"step": "initialize", "protocolVersion": 1, "loadSession": True, "updates": [], "asked": []},
    {"step": "session/new", "sessionId": "s0", "updates": [], "asked": []},
    {
        "step": "prompt",
        "stopReason": "end_turn",
        "updates": [["agent_message_chunk", "Hello there."]],
        "asked": [],
    },
    {
        "step": "permission",
        "stopReason": "end_turn",
        "updates": [["agent_message_chunk", "yes"]],
        "asked": ["t1"],
    },
    {
        "step": "cancel",
        "stopReason": "cancelled",
        "updates": [["agent_message_chunk", "Thinking"]],
        "asked": [],
    },
    {
        "step": "session/load",
        "updates": [["user_message_chunk", "earlier"], ["agent_message_chunk", "before"]],
        "asked": [],
    },
    {
        "step": "prompt after load",
        "stopReason": "end_turn",
        "updates": [["agent_message_chunk", "Hello there."]],
        "asked": [],
    },
]


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_the_typescript_sdk_client_runs_the_seven_steps(transport: str, tmp_path: Path) -> None:
    agents: list[ScriptedAgent] = []
    endpoint = AcpEndpoint(
        lambda name: ScriptedChannel(agents, on_prompt=_turn, agent_type=_Agent),
        roots=(str(tmp_path),),
    )
    from starlette.routing import Route, Router, WebSocketRoute

    app = Router(
        routes=[Route("/acp", endpoint), WebSocketRoute("/acp", endpoint)],
        lifespan=lambda app: endpoint.running(),
    )
    with serve_asgi(app) as host:
        steps = _steps(f"{transport}://{host}/acp?agent=scripted", transport, str(tmp_path))
    assert steps == EXPECTED
    first, second = ([m.get("method") for m in a.received] for a in agents)
    assert first[:3] == ["initialize", "session/new", "session/prompt"]
    assert second == ["initialize", "session/load", "session/prompt"]
