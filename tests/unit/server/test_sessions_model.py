"""The session object's ``current_model``: the agent's ``currentModelId``, then the last model
set. No process is started."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import LoadingAgent, ScriptedLauncher, Served, make_config, served

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import create_app

pytestmark = pytest.mark.anyio

MODELS = [{"modelId": "fast", "name": "Fast"}, {"modelId": "deep", "name": "Deep"}]


class ModelAgent(LoadingAgent):
    """Announces two models, ``fast`` running, and takes ``session/set_model``."""

    async def _answer(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "session/new":
            models = {"currentModelId": "fast", "availableModels": MODELS}
            result = {"sessionId": f"m-{self.sessions}", "models": models}
            self.sessions += 1
        elif method == "session/set_model":
            result = {}
        else:
            await super()._answer(message)
            return
        await self.send({"id": message["id"], "result": result})


class ModelLauncher(ScriptedLauncher):
    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = ModelAgent(agent_end, name="scripted")
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


@asynccontextmanager
async def model_server(root: str, state_dir: str) -> AsyncIterator[Served]:
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            app = create_app(make_config(root, state_dir), launcher=ModelLauncher(tg))
            async with served(app) as server:
                yield server
            tg.cancel_scope.cancel()


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    root = tmp_path / "root"
    root.mkdir()
    return str(root.resolve()), str(tmp_path / "state")


async def test_the_current_model_is_the_agent_s_then_the_one_set(dirs: tuple[str, str]) -> None:
    async with model_server(*dirs) as server:
        created = (await server.request("POST", "/v1/sessions", json={"agent": "scripted"})).json()
        url = f"/v1/sessions/{created['id']}"
        chosen = await server.request("POST", f"{url}/model", json={"model_id": "deep"})
        refused = await server.request("POST", f"{url}/model", json={"model_id": "huge"})
        again = (await server.request("GET", url)).json()
    assert (created["models"], created["current_model"]) == (MODELS, "fast")
    assert (chosen.status_code, chosen.json()["current_model"]) == (200, "deep")
    assert refused.status_code == 400
    assert again["current_model"] == "deep"


async def test_a_model_chosen_at_creation_is_the_current_one(dirs: tuple[str, str]) -> None:
    async with model_server(*dirs) as server:
        body = {"agent": "scripted", "model": "deep"}
        created = (await server.request("POST", "/v1/sessions", json=body)).json()
    assert created["current_model"] == "deep"
