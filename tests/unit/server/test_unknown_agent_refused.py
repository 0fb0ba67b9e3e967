"""`gemwire serve` and an agent gemwire does not know the modes of: a server session always
answers permissions by callback, so the session is refused before any prompt, the API's
error saying why (`gemwire.runners.acp.asking`), and nothing is left of it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from kit.server import LoadingAgent, ScriptedLauncher, make_config, served

from gemwire.runners.acp import AgentChannel, memory_channel_pair
from gemwire.runners.acp.options import AcpOptions
from gemwire.server import create_app
from gemwire.testing import AgentScenario
from gemwire.wire import acp

pytestmark = pytest.mark.anyio


class UnknownLauncher(ScriptedLauncher):
    """The agent ``scripted``, saying it is ``my-agent`` (modes: default, yolo)."""

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        info = acp.Implementation(name="my-agent", version="1.0")
        agent = LoadingAgent(agent_end, AgentScenario(agent_info=info))
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


@pytest.mark.parametrize("permissions", ["ask", "deny"])
async def test_a_session_of_an_agent_gemwire_does_not_know_is_refused(
    tmp_path: Path, permissions: str
) -> None:
    config = make_config(str(tmp_path), str(tmp_path / "state"))
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = UnknownLauncher(tg)
            async with served(create_app(config, launcher=launcher)) as server:
                body = {"agent": "scripted", "cwd": str(tmp_path), "permissions": permissions}
                refused = await server.request("POST", "/v1/sessions", json=body)
                listed = await server.request("GET", "/v1/sessions")
            tg.cancel_scope.cancel()
    assert (refused.status_code, refused.json()) == (
        400,
        {
            "error": {
                "kind": "permissions_unenforceable",
                "message": "session refused: acp:my-agent is not an agent gemwire knows the "
                "modes of, so it cannot make sure the agent asks before acting (a permission "
                "preset answers only what an agent asks): pass --mode (AcpOptions.mode) with "
                "the one of its modes (default, yolo) you choose to run it in, or "
                "--permissions all to allow everything. Through the server: give POST "
                '/v1/sessions "mode" (one of its modes, which the session is then run in) or '
                '"permissions": "all"',
            }
        },
    )
    assert listed.json()["sessions"] == []
    [agent] = launcher.started
    assert [m.get("method") for m in agent.received] == ["initialize", "session/new"]
