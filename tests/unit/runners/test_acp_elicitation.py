"""``elicitation/create`` and ``elicitation/complete`` against the in-process `ScriptedAgent`:
what the client declares, what it answers, and the notices it emits."""

from __future__ import annotations

from typing import Any

import pytest

from gemwire.events import Event, Notice
from gemwire.runners.acp import AcpClient, ElicitationAnswer, ElicitationRequest
from gemwire.testing import ScriptedAgent, scripted_client

pytestmark = pytest.mark.anyio

FORM = {
    "mode": "form",
    "message": "Which account?",
    "requestedSchema": {
        "type": "object",
        "properties": {"account": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["account"],
    },
}
URL = {"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://x.test/a"}


async def ask(
    client: AcpClient, agent: ScriptedAgent, *questions: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[Event]]:
    """One turn in which the agent asks ``questions``; the answers and the turn's events."""
    answers: list[dict[str, Any]] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        answers.extend(
            [await agent.request("elicitation/create", {"sessionId": sid, **q}) for q in questions]
        )
        return "end_turn"

    agent.on_prompt = on_prompt
    session = await client.new_session()
    async with session.prompt("go") as turn:
        events = [event async for event in turn]
    return answers, events


def notices(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.severity, e.message) for e in events if isinstance(e, Notice)]


async def test_without_a_handler_nothing_is_declared_and_an_agent_asking_is_declined() -> None:
    async with scripted_client() as (client, agent):
        answers, events = await ask(client, agent, FORM)
    capabilities = agent.received[0]["params"]["clientCapabilities"]
    assert "elicitation" not in capabilities
    assert [a["result"] for a in answers] == [{"action": "decline"}]
    assert notices(events) == [
        ("info", "the agent asked for input (form): 'Which account?'; answered decline")
    ]
    assert {e.session_id for e in events} == {"s0"}


async def test_a_handler_is_declared_and_answers_forms_and_urls() -> None:
    asked: list[ElicitationRequest] = []

    async def handler(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        if request.mode == "url":
            return ElicitationAnswer(action="accept")
        return ElicitationAnswer(action="accept", content={"account": "me", "extra": 1})

    async with scripted_client(elicitation_handler=handler) as (client, agent):
        answers, events = await ask(client, agent, FORM, URL, {**URL, "mode": "voice"})
    capabilities = agent.received[0]["params"]["clientCapabilities"]
    assert capabilities["elicitation"] == {"form": {}, "url": {}}
    assert [a["result"] for a in answers] == [
        {"action": "accept", "content": {"account": "me"}},  # only the fields asked for
        {"action": "accept"},
        {"action": "decline"},  # a mode this client does not know: never shown
    ]
    assert [(r.mode, r.session_id, r.required, r.url) for r in asked] == [
        ("form", "s0", ["account"], None),
        ("url", "s0", [], "https://x.test/a"),
    ]
    assert asked[0].fields == {"account": {"type": "string"}, "count": {"type": "integer"}}
    assert [m for _, m in notices(events)] == [
        "the agent asked for input (form): 'Which account?'; answered accept",
        "the agent asked for input (url): 'Sign in'; answered accept",
        "the agent asked for input (voice): 'Sign in'; answered decline",
    ]


async def test_a_handler_that_fails_or_skips_a_required_field_declines() -> None:
    calls = 0

    async def handler(request: ElicitationRequest) -> ElicitationAnswer:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("no keyboard")
        return ElicitationAnswer(action="accept", content={"count": 2})

    async with scripted_client(elicitation_handler=handler) as (client, agent):
        answers, events = await ask(client, agent, FORM, FORM)
    assert [a["result"] for a in answers] == [{"action": "decline"}, {"action": "decline"}]
    assert notices(events) == [
        ("warning", "the elicitation handler failed: RuntimeError('no keyboard')"),
        ("info", "the agent asked for input (form): 'Which account?'; answered decline"),
        ("info", "the agent asked for input (form): 'Which account?'; answered decline"),
    ]


async def test_elicitation_complete_is_an_info_notice() -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.send({"method": "elicitation/complete", "params": {"elicitationId": "e1"}})
        return "end_turn"

    async with scripted_client(on_prompt=on_prompt) as (client, _):
        session = await client.new_session()
        async with session.prompt("go") as turn:
            events = [event async for event in turn]
    assert [(e.session_id, e.severity, e.message) for e in events if isinstance(e, Notice)] == [
        ("s0", "info", "the agent completed elicitation e1")
    ]
