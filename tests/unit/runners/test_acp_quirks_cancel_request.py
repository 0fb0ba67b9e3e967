"""Codex-acp 0.16.0 answers the ``$/cancel_request`` notification with an id-less "Method not
found" error: for Codex alone, and that answer alone, the client drops it quietly
(runners/acp/quirks.py); from any other agent, or in any other shape, it is a protocol
violation told as a ``notice``."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from gemwire.errors import RunTimedOut
from gemwire.events import Notice
from gemwire.runners.acp import AcpOptions
from gemwire.testing import AgentScenario, ScriptedAgent, scripted_client
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

RESUMABLE = acp.AgentCapabilities(
    load_session=True, session_capabilities=acp.SessionCapabilities(resume={})
)
CODEX_ANSWER = {"code": -32601, "message": "Method not found", "data": "$/cancel_request"}


async def notices_after_answer(name: str, error: dict[str, Any]) -> list[str]:
    """What an agent named ``name`` that answers ``$/cancel_request`` with the id-less ``error``
    makes the client tell."""

    async def never(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async with scripted_client(
        # "all": codex-acp 0.16 is made to ask only when gemwire starts it (asking.py).
        AcpOptions(request_timeout=0.05, permissions="all"),
        scenario=AgentScenario(
            agent_info=acp.Implementation(name=name, version="1.0"), agent_capabilities=RESUMABLE
        ),
        methods={"session/resume": never},
    ) as (client, agent):
        with pytest.raises(RunTimedOut):
            await client.resume_session("old")
        await agent.request_cancelled.wait()
        await agent.send({"error": error})
        session = await client.new_session()  # what came for no session goes to this one
        events = session.take_events()
    return [e.message for e in events if isinstance(e, Notice)]


async def test_codex_s_answer_to_cancel_request_is_dropped_quietly() -> None:
    assert await notices_after_answer("codex-acp", CODEX_ANSWER) == []


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("qwen-code", CODEX_ANSWER),
        ("codex-acp", {**CODEX_ANSWER, "data": "session/fork"}),
        ("codex-acp", {"code": -32603, "message": "Internal error"}),
    ],
    ids=["another agent", "another method", "another error"],
)
async def test_any_other_id_less_answer_is_a_protocol_violation(
    name: str, error: dict[str, Any]
) -> None:
    line = json.dumps({"jsonrpc": "2.0", "error": error})
    assert await notices_after_answer(name, error) == [
        f"protocol violation: a response without an id: {line}"
    ]
