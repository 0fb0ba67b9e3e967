"""An agent that answers ``initialize`` with a protocol version gemwire does not speak (the
v2 draft): the client closes the connection and fails with a ``protocol`` error naming the
version, before any session (the spec: close the connection and tell the user)."""

from __future__ import annotations

import json

import anyio
import pytest

from gemwire.errors import AgentRequestFailed
from gemwire.events import TurnError
from gemwire.runners.acp import AcpClient, AcpOptions, memory_channel_pair, turn_error

pytestmark = pytest.mark.anyio

MESSAGE = (
    "the agent speaks ACP protocol version 2 (the v2 draft); gemwire speaks version 1 only: "
    "use a version of the agent that speaks ACP v1"
)


async def test_an_agent_speaking_v2_is_a_protocol_error_naming_the_version() -> None:
    client_end, agent_end = memory_channel_pair()
    received: list[str] = []

    async def v2_agent() -> None:
        while data := await agent_end.receive():
            message = json.loads(data)
            received.append(message["method"])
            result = {"protocolVersion": 2, "agentInfo": {"name": "next", "version": "2.0"}}
            await agent_end.send(
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            )
        await agent_end.close(0)

    with anyio.fail_after(10):
        async with agent_end, client_end, anyio.create_task_group() as tg:
            tg.start_soon(v2_agent)
            with pytest.raises(AgentRequestFailed) as caught:
                async with AcpClient(AcpOptions(), channel=client_end):
                    pytest.fail("the client started")
    exc = caught.value
    assert (str(exc), exc.method, exc.code, exc.data) == (
        MESSAGE,
        "initialize",
        -32600,
        {"protocolVersion": 2},
    )
    assert received == ["initialize"]  # nothing more, and the connection closed
    # `gemwire acp` and batch show a failure before the turn as its turn_completed error.
    assert turn_error(exc, exc.method) == TurnError(
        kind="protocol", message=f"initialize: {MESSAGE}"
    )
