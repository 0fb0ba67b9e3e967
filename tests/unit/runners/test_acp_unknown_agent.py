"""An agent gemwire does not know the modes of is refused under anything but "allow
everything" (`gemwire.runners.acp.asking`), before any prompt; ``AcpOptions.mode``
(``--mode``) runs it in the mode the user chose. And the scripted agent, which gemwire
knows, is put in its asking mode as a real agent is."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from gemwire.errors import AgentRequestFailed, InvalidOptions, PermissionsUnenforceable
from gemwire.runners.acp import AcpOptions, memory_channel_pair, run_acp
from gemwire.runners.acp.permissions import PermissionRequest
from gemwire.testing import AgentScenario, AgentTurn, Say, ScriptedAgent, scripted_client
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

MODES = acp.SessionModeState(
    current_mode_id="yolo",
    available_modes=[acp.SessionMode(id="default", name="Ask"), acp.SessionMode(id="yolo")],
)
TURN = AgentTurn(steps=[Say(text="Done.")])


def agent(name: str, modes: acp.SessionModeState | None = MODES) -> AgentScenario:
    """A scripted agent that says it is ``name``, and has ``modes``."""
    info = acp.Implementation(name=name, version="1.0")
    return AgentScenario(agent_info=info, modes=modes, turns=[TURN])


def sent(scripted: ScriptedAgent, method: str) -> list[dict[str, Any]]:
    return [m["params"] for m in scripted.received if m.get("method") == method]


REFUSED = (
    "acp:my-agent is not an agent gemwire knows the modes of, so it cannot make sure the "
    "agent asks before acting (a permission preset answers only what an agent asks)"
)


async def test_an_unknown_agent_is_refused_saying_why_and_what_to_pass() -> None:
    async with scripted_client(AcpOptions(), scenario=agent("my-agent")) as (client, scripted):
        with pytest.raises(PermissionsUnenforceable) as refused:
            await client.new_session()
    assert str(refused.value) == (
        f"{REFUSED}: pass --mode (AcpOptions.mode) with the one of its modes (default, "
        "yolo) you choose to run it in, or --permissions all to allow everything"
    )
    assert isinstance(refused.value, InvalidOptions)  # the CLI's usage error, exit 2
    assert sent(scripted, "session/set_mode") == sent(scripted, "session/prompt") == []


async def test_an_unknown_agent_that_names_no_modes_can_only_be_allowed_everything() -> None:
    scenario = agent("my-agent", modes=None)
    async with scripted_client(AcpOptions(permissions="reads"), scenario=scenario) as (client, _):
        with pytest.raises(PermissionsUnenforceable) as refused:
            await client.new_session()
    assert str(refused.value) == (
        f"{REFUSED}, and it names no modes to choose from: --permissions all allows everything"
    )


async def test_a_callback_is_refused_too_and_allowing_everything_is_not() -> None:
    async def ask_nobody(request: PermissionRequest) -> str | None:
        return None

    options = AcpOptions(permissions="all")
    async with scripted_client(
        options, scenario=agent("my-agent"), permission_handler=ask_nobody
    ) as (client, _):
        with pytest.raises(PermissionsUnenforceable):
            await client.new_session()
    async with scripted_client(options, scenario=agent("my-agent")) as (client, scripted):
        assert (await client.new_session()).current_mode_id == "yolo"
    assert sent(scripted, "session/set_mode") == []


async def test_mode_runs_an_unknown_agent_in_the_mode_the_user_chose() -> None:
    client_end, agent_end = memory_channel_pair()
    scripted = ScriptedAgent(agent_end, agent("my-agent"))
    async with client_end, agent_end, anyio.create_task_group() as tg:
        tg.start_soon(scripted.run)
        options = AcpOptions(mode="yolo")  # deny: it answers what yolo asks
        async with run_acp("go", options, channel=client_end) as turn:
            events = [event async for event in turn]
        tg.cancel_scope.cancel()
    assert turn.result.ok, turn.result.error
    assert turn.result.answer == "Done."
    assert sent(scripted, "session/set_mode") == [{"sessionId": "s0", "modeId": "yolo"}]
    kinds = [e.type for e in events]
    assert kinds == ["session_started", "user_message", "message_delta", "turn_completed"]


async def test_a_mode_the_agent_does_not_offer_is_its_refusal() -> None:
    options = AcpOptions(mode="plan")
    async with scripted_client(options, scenario=agent("my-agent")) as (client, _):
        with pytest.raises(AgentRequestFailed, match="no mode 'plan'"):
            await client.new_session()


async def test_the_scripted_agent_is_put_in_its_asking_mode_as_a_real_agent_is() -> None:
    scenario = agent("scripted")  # it opens in yolo
    async with scripted_client(AcpOptions(), scenario=scenario) as (client, scripted):
        assert (await client.new_session()).current_mode_id == "default"
    assert sent(scripted, "session/set_mode") == [{"sessionId": "s0", "modeId": "default"}]
    async with scripted_client(AcpOptions(), scenario=AgentScenario()) as (client, scripted):
        assert (await client.new_session()).current_mode_id == "default"  # its own default
    assert sent(scripted, "session/set_mode") == []
