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
from kit.acp_interop import EXPECTED, ScriptedLoadingAgent, scripted_turn
from kit.served import ScriptedChannel, serve_asgi

from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import ScriptedAgent

SDK = Path(__file__).parents[3] / "clis" / "acp-sdk-ts-2.4.0"
pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (SDK / "node_modules").is_dir(),
    reason="the ACP TypeScript SDK is installed by `make agents` (clis/acp-sdk-ts-2.4.0)",
)


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


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_the_typescript_sdk_client_runs_the_seven_steps(transport: str, tmp_path: Path) -> None:
    agents: list[ScriptedAgent] = []
    endpoint = AcpEndpoint(
        lambda name: ScriptedChannel(
            agents, on_prompt=scripted_turn, agent_type=ScriptedLoadingAgent
        ),
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
