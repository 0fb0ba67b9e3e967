"""``session/resume`` (and the other session lifecycle methods of ACP 1.21) against the
in-process `ScriptedAgent`: the exact frames the client sends, and the events it emits."""

from __future__ import annotations

import os
from typing import Any

import anyio
import msgspec
import pytest

from gemwire.errors import AgentRequestFailed, InvalidOptions, RunTimedOut
from gemwire.events import Event, TokenUsage, TurnCompleted
from gemwire.runners.acp import (
    AcpClient,
    AcpOptions,
    memory_channel_pair,
    run_acp,
    turn as acp_turn,
)
from gemwire.sessions.pricing import load_prices
from gemwire.testing import AgentScenario, ScriptedAgent, ScriptedError, scripted_client
from gemwire.wire import acp
from gemwire.wire.jsonrpc import METHOD_NOT_FOUND

pytestmark = pytest.mark.anyio

RESUMABLE = AgentScenario(
    agent_capabilities=acp.AgentCapabilities(
        load_session=True, session_capabilities=acp.SessionCapabilities(resume={})
    )
)
LOADABLE = AgentScenario(agent_capabilities=acp.AgentCapabilities(load_session=True))
ALLOWED = AcpOptions(permissions="all")


@pytest.fixture
def here() -> str:
    """The sessions' folder as the client names it to the agent (symlinks resolved)."""
    return os.path.realpath(os.getcwd())


def kinds(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def sent(agent: ScriptedAgent, method: str) -> list[dict[str, Any]]:
    return [m["params"] for m in agent.received if m.get("method") == method]


async def resumed(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
    # No asking mode: opened with everything allowed (ALLOWED), it stays in this one.
    return {"modes": {"currentModeId": "code", "availableModes": [{"id": "code"}]}}


async def loaded(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
    content = {"type": "text", "text": "earlier"}
    await agent.update(params["sessionId"], "user_message_chunk", content=content)
    return {}


async def test_resume_continues_a_session_without_replaying_it(here: str) -> None:
    methods = {"session/resume": resumed, "session/load": loaded}
    async with scripted_client(ALLOWED, scenario=RESUMABLE, methods=methods) as (client, agent):
        assert client.offers("session/resume")
        session = await client.resume_session("old")
        assert (session.session_id, session.current_mode_id) == ("old", "code")
        async with session.prompt("again") as turn:
            events = [event async for event in turn]
    assert sent(agent, "session/resume") == [{"sessionId": "old", "cwd": here, "mcpServers": []}]
    assert sent(agent, "session/load") == []
    assert kinds(events) == ["session_started", "user_message", "turn_completed"]
    assert [e.session_id for e in events] == ["old"] * 3
    assert not any(getattr(e, "replay", False) for e in events)


async def test_continue_session_resumes_where_offered_else_loads_with_its_history() -> None:
    methods = {"session/resume": resumed, "session/load": loaded}
    async with scripted_client(ALLOWED, scenario=RESUMABLE, methods=methods) as (client, agent):
        await client.continue_session("old")
    assert (len(sent(agent, "session/resume")), len(sent(agent, "session/load"))) == (1, 0)

    async with scripted_client(scenario=LOADABLE, methods=methods) as (client, agent):
        assert not client.offers("session/resume")
        session = await client.continue_session("old")
        events = session.take_events()
    assert (len(sent(agent, "session/resume")), len(sent(agent, "session/load"))) == (0, 1)
    assert kinds(events) == ["session_started", "user_message"]
    assert events[1].replay is True


async def test_resume_is_refused_locally_when_the_agent_does_not_offer_it() -> None:
    async with scripted_client(scenario=LOADABLE) as (client, agent):
        with pytest.raises(AgentRequestFailed, match="does not advertise session/resume") as info:
            await client.resume_session("old")
    assert info.value.code == METHOD_NOT_FOUND
    assert sent(agent, "session/resume") == []


async def test_a_resume_the_agent_refuses_raises_and_leaves_no_session() -> None:
    async def refuse(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        raise ScriptedError("Resource not found: old", code=-32002)

    methods = {"session/resume": refuse}
    async with scripted_client(ALLOWED, scenario=RESUMABLE, methods=methods) as (client, _):
        with pytest.raises(AgentRequestFailed, match="Resource not found") as info:
            await client.resume_session("old")
        assert (info.value.method, client.sessions) == ("session/resume", {})


async def test_run_acp_refuses_both_load_session_and_resume_session() -> None:
    options = AcpOptions(command=("never-started",), load_session="a", resume_session="b")
    with pytest.raises(InvalidOptions, match="give one session to open"):
        async with run_acp("go", options):
            pass


CLOSABLE = AgentScenario(
    agent_capabilities=acp.AgentCapabilities(session_capabilities=acp.SessionCapabilities(close={}))
)


async def closed(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def test_close_frees_the_session_and_the_client_forgets_it() -> None:
    async with scripted_client(scenario=CLOSABLE, methods={"session/close": closed}) as (
        client,
        agent,
    ):
        session = await client.new_session()
        assert list(client.sessions) == ["s0"]
        await session.close()
        assert client.sessions == {}
    assert sent(agent, "session/close") == [{"sessionId": "s0"}]


async def test_close_stops_a_running_turn_first() -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.say(sid, "working")
        await agent.cancelled.wait()
        return "cancelled"

    methods = {"session/close": closed}
    async with scripted_client(scenario=CLOSABLE, methods=methods, on_prompt=on_prompt) as (
        client,
        agent,
    ):
        session = await client.new_session()
        async with session.prompt("go") as turn:
            async for event in turn:
                if event.type == "message_delta":
                    await session.close()
    assert turn.result.stop_reason == "cancelled"
    assert turn.result.error is not None
    assert (turn.result.error.kind, turn.result.error.message) == (
        "cancelled",
        "the session was closed",
    )
    methods_sent = [m.get("method") for m in agent.received]
    assert methods_sent[-2:] == ["session/cancel", "session/close"]


async def test_close_is_refused_locally_when_the_agent_does_not_offer_it() -> None:
    async with scripted_client() as (client, agent):
        session = await client.new_session()
        assert not client.offers("session/close")
        with pytest.raises(AgentRequestFailed, match="does not advertise session/close"):
            await session.close()
        assert list(client.sessions) == ["s0"]
    assert sent(agent, "session/close") == []


async def test_a_request_abandoned_by_its_timeout_is_cancelled_and_its_late_answer_dropped() -> (
    None
):
    answer = anyio.Event()

    async def slow(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        await answer.wait()
        raise ScriptedError("Request cancelled", code=-32800)

    async with scripted_client(
        AcpOptions(request_timeout=0.05), scenario=RESUMABLE, methods={"session/resume": slow}
    ) as (client, agent):
        with pytest.raises(RunTimedOut, match=r"did not answer session/resume within 0\.05 s"):
            await client.resume_session("old")
        await agent.request_cancelled.wait()
        [request] = [m for m in agent.received if m.get("method") == "session/resume"]
        assert sent(agent, "$/cancel_request") == [{"requestId": request["id"]}]
        answer.set()
        session = await client.new_session()  # the late answer came before this one's
        events = session.take_events()
    assert kinds(events) == ["session_started"]  # no protocol violation for the late answer


async def test_a_request_whose_caller_gave_up_is_cancelled() -> None:
    async def never(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async with scripted_client(scenario=RESUMABLE, methods={"session/resume": never}) as (
        client,
        agent,
    ):
        with anyio.move_on_after(0.05):
            await client.resume_session("old")
        await agent.request_cancelled.wait()
        [request] = [m for m in agent.received if m.get("method") == "session/resume"]
        assert sent(agent, "$/cancel_request") == [{"requestId": request["id"]}]
        assert client.sessions == {}


async def done(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def test_delete_session_and_logout_send_exactly_their_requests() -> None:
    capabilities = acp.AgentCapabilities(
        session_capabilities=acp.SessionCapabilities(delete={}),
        auth=acp.AgentAuthCapabilities(logout={}),
    )
    methods = {"session/delete": done, "logout": done}
    async with scripted_client(
        scenario=AgentScenario(agent_capabilities=capabilities), methods=methods
    ) as (client, agent):
        session = await client.new_session()
        await client.delete_session(session.session_id)
        assert client.sessions == {}
        await client.logout()
    assert sent(agent, "session/delete") == [{"sessionId": "s0"}]
    assert [m for m in agent.received if m.get("method") == "logout"] == [
        {"jsonrpc": "2.0", "id": 3, "method": "logout", "params": {}}
    ]


async def test_delete_session_and_logout_are_refused_where_not_advertised() -> None:
    async with scripted_client() as (client, agent):
        with pytest.raises(AgentRequestFailed, match="does not advertise session/delete"):
            await client.delete_session("s0")
        with pytest.raises(AgentRequestFailed, match="does not advertise logout"):
            await client.logout()
    assert [m.get("method") for m in agent.received] == ["initialize"]


async def test_fork_opens_a_new_session_from_another_ones_history(here: str) -> None:
    async def forked(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        return {"sessionId": "fork-of-" + params["sessionId"]}

    capabilities = acp.AgentCapabilities(session_capabilities=acp.SessionCapabilities(fork={}))
    async with scripted_client(
        scenario=AgentScenario(agent_capabilities=capabilities), methods={"session/fork": forked}
    ) as (
        client,
        agent,
    ):
        original = await client.new_session()
        fork = await client.fork_session(original.session_id)
        events = fork.take_events()
        assert sorted(client.sessions) == ["fork-of-s0", "s0"]
    assert sent(agent, "session/fork") == [{"sessionId": "s0", "cwd": here, "mcpServers": []}]
    assert [(e.type, e.session_id) for e in events] == [("session_started", "fork-of-s0")]


async def test_fork_is_refused_locally_when_the_agent_does_not_offer_it() -> None:
    async with scripted_client() as (client, agent):
        with pytest.raises(AgentRequestFailed, match="does not advertise session/fork"):
            await client.fork_session("s0")
    assert sent(agent, "session/fork") == []


async def test_continue_session_says_so_when_the_agent_can_neither_resume_nor_load() -> None:
    async with scripted_client() as (client, agent):
        with pytest.raises(AgentRequestFailed) as info:
            await client.continue_session("old")
    assert str(info.value) == (
        "the agent advertises neither session/resume nor session/load: it cannot continue a "
        "saved session"
    )
    assert info.value.unsupported
    assert [m.get("method") for m in agent.received] == ["initialize"]


async def test_a_prompt_whose_cancel_the_agent_ignores_is_abandoned_with_cancel_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(acp_turn, "CANCEL_GRACE", 0.05)

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.say(sid, "working")
        await agent.request_cancelled.wait()  # session/cancel alone does not stop it
        return "cancelled"  # a late answer

    async with scripted_client(on_prompt=on_prompt) as (client, agent):
        session = await client.new_session()
        async with session.prompt("go") as turn:
            async for event in turn:
                if event.type == "message_delta":
                    await session.cancel()
        later = await client.new_session()  # after the late answer
        events = later.take_events()
    [prompt] = [m for m in agent.received if m.get("method") == "session/prompt"]
    assert sent(agent, "$/cancel_request") == [{"requestId": prompt["id"]}]
    assert turn.result.error is not None
    assert turn.result.error.kind == "cancelled"
    assert [e.message for e in turn.result.notices] == [
        "the agent did not end the cancelled turn within 0.05 s"
    ]
    assert kinds(events) == ["session_started"]


BOOLEAN_OPTION = {
    "id": "auto_approve",
    "name": "Auto-approve",
    "type": "boolean",
    "currentValue": False,
}


async def test_the_client_declares_boolean_config_options_and_sets_one_as_the_spec_says() -> None:
    # The value went as {"sessionId", "configId", "value": true}, no "type": neither of the
    # request's variants; and without the capability an agent may not offer such options.
    async def set_option(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        chosen = {**BOOLEAN_OPTION, "currentValue": params["value"]}
        return {"configOptions": [chosen]}

    methods = {"session/set_config_option": set_option}
    async with scripted_client(methods=methods) as (client, agent):
        session = await client.new_session()
        await session.set_config_option("auto_approve", True)
        await session.set_config_option("model", "fast")
        assert session.config_options == [{**BOOLEAN_OPTION, "currentValue": "fast"}]
        with pytest.raises(InvalidOptions) as refused:
            await session.set_config_option("auto_approve", 1)  # type: ignore[arg-type]
    (initialize,) = sent(agent, "initialize")
    assert initialize["clientCapabilities"]["session"]["configOptions"] == {"boolean": {}}
    assert sent(agent, "session/set_config_option") == [
        {"sessionId": "s0", "configId": "auto_approve", "type": "boolean", "value": True},
        {"sessionId": "s0", "configId": "model", "value": "fast"},
    ]
    assert str(refused.value) == (
        "config option 'auto_approve': a value is a value id (a string) or a boolean, not 1"
    )


def quota(model: str) -> dict[str, Any]:
    """Gemini CLI's ``_meta.quota`` of a prompt result: 100 tokens in, 10 out, on ``model``."""
    tokens = {"input_tokens": 100, "output_tokens": 10}
    return {
        "quota": {"token_count": tokens, "model_usage": [{"model": model, "token_count": tokens}]}
    }


class PricedAgent(ScriptedAgent):
    """Answers a prompt with ``result`` (its usage), in a session whose model is ``model``."""

    def __init__(self, *args: Any, result: dict[str, Any], model: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.result = result
        self.model = model

    async def respond(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "session/new":
            models = {"currentModelId": self.model, "availableModels": []}
            result = {"sessionId": "s0", "models": models}
        elif method == "session/prompt":
            result = {"stopReason": "end_turn", **self.result}
        else:
            await super().respond(message)
            return
        await self.send({"id": message["id"], "result": result})


async def priced_turn(result: dict[str, Any], model: str) -> TokenUsage | None:
    client_end, agent_end = memory_channel_pair()
    agent = PricedAgent(agent_end, result=result, model=model)
    with anyio.fail_after(10):
        async with agent_end, client_end, anyio.create_task_group() as tg:
            tg.start_soon(agent.run)
            async with AcpClient(AcpOptions(), channel=client_end) as client:
                session = await client.new_session()
                async with session.prompt("go") as turn:
                    events = [event async for event in turn]
            tg.cancel_scope.cancel()
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.usage == turn.result.usage
    return completed.usage


def price(model: str, *, input: int, output: int) -> float:
    rates = load_prices().models[model]
    return (input * rates.input + output * rates.output) / 1_000_000


async def test_an_acp_turn_gets_the_cost_estimate_of_its_models_tokens() -> None:
    # Only stream-json runs were priced: `gemwire acp` and the page showed no cost for
    # Gemini over ACP, though the turn reported its tokens model by model.
    usage = await priced_turn({"_meta": quota("gemini-2.5-pro")}, model="auto")
    assert usage is not None
    assert usage.cost_usd == pytest.approx(price("gemini-2.5-pro", input=100, output=10))
    assert usage.context_window == load_prices().models["gemini-2.5-pro"].context_window


async def test_standard_usage_is_priced_as_the_sessions_model() -> None:
    tokens = {"inputTokens": 1000, "outputTokens": 200, "totalTokens": 1200}
    usage = await priced_turn({"usage": tokens}, model="claude-sonnet-4-5")
    assert usage is not None
    assert usage.cost_usd == pytest.approx(price("claude-sonnet-4-5", input=1000, output=200))


async def test_a_model_without_a_price_gets_no_estimate() -> None:
    usage = await priced_turn({"_meta": quota("gemini-3.8-flash")}, model="auto")
    assert usage is not None
    assert (usage.cost_usd, usage.context_window) == (msgspec.UNSET, msgspec.UNSET)
    tokens = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    usage = await priced_turn({"usage": tokens}, model="default")  # Claude Code's
    assert usage is not None
    assert usage.cost_usd is msgspec.UNSET
