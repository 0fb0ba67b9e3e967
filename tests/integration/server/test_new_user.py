"""What a new user hit: a continued Gemini session titled with its replayed preamble, an
unknown agent's 404 without gemini-stream, ``import gemwire.server`` without the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kit.server import LoadingAgent, scripted_server

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair

pytestmark = pytest.mark.anyio

PREAMBLE = "<session_context>\nThis is the Gemini CLI. We are setting up the context"


class Replaying(LoadingAgent):
    """Loads a session by replaying Gemini's injected preamble, then the user's prompt."""

    async def respond(self, message: dict[str, Any]) -> None:
        if message["method"] == "session/load":
            sid = message["params"]["sessionId"]
            for text in (PREAMBLE, "fix the flaky test"):
                await self.update(sid, "user_message_chunk", content={"type": "text", "text": text})
        await super().respond(message)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "root").mkdir()
    return str((tmp_path / "root").resolve()), str(tmp_path / "state")


async def test_a_continued_session_is_titled_with_the_users_first_prompt(
    dirs: tuple[str, str],
) -> None:
    async with scripted_server(*dirs) as (server, launcher):

        def channel(options: AcpOptions) -> AgentChannel:
            client_end, agent_end = memory_channel_pair()
            agent = Replaying(agent_end)
            launcher.tg.start_soon(agent.run)
            return client_end

        launcher.channel = channel  # type: ignore[method-assign]
        body = {"agent": "scripted", "continue": "saved-1"}
        created = await server.request("POST", "/v1/sessions", json=body)
        listed = (await server.request("GET", "/v1/sessions")).json()
    assert created.status_code == 201, created.text
    assert [s["title"] for s in listed["sessions"]] == ["fix the flaky test"]


async def test_an_unknown_agent_404_names_gemini_stream_too(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        response = await server.request("POST", "/v1/sessions", json={"agent": "nope"})
    assert response.status_code == 404
    assert response.json()["error"]["message"] == (
        "unknown agent 'nope'; known: scripted, gemini-stream"
    )


def test_without_the_extra_import_gemwire_server_names_it() -> None:
    code = "import sys; sys.modules['hypercorn'] = None; import gemwire.server"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "ImportError: gemwire.server needs the [serve] extra (hypercorn is missing): "
        "pip install 'gemwire[serve]'"
    )
