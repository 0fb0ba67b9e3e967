"""The seven steps of the ACP transport interop tests through gemwire's own client
(`AcpClient` over `remote_channel`), against any ACP endpoint: initialize, session/new,
a streamed prompt, a permission round trip, cancel, session/load on a new connection
and a prompt on the loaded session; what each step showed."""

from __future__ import annotations

from typing import Any

from gemwire.events import Event
from gemwire.runners.acp import AcpClient, AcpOptions, MemoryChannel
from gemwire.runners.acp.remote import remote_channel
from gemwire.testing import AgentScenario, ScriptedAgent
from gemwire.wire import acp

Step = tuple[str, Any]


def seen(events: list[Event]) -> list[tuple[str, Any]]:
    """Each event's type, and its text where it has one (usage left out)."""
    return [(e.type, getattr(e, "text", None)) for e in events if e.type != "usage"]


async def seven_steps(url: str, cwd: str, *, token: str | None = None) -> list[Step]:
    """The prompts are ``hello``, ``permission`` (a tool asks, every permission is
    allowed), ``hang`` (cancelled once the first text came) and ``hello`` after the load."""
    steps: list[Step] = []
    options = AcpOptions(permissions="all")
    async with AcpClient(options, channel=remote_channel(url, token=token)) as client:
        steps.append(("initialize", client.agent_capabilities.load_session))
        session = await client.new_session(cwd=cwd)
        steps.append(("session/new", bool(session.session_id)))
        for text in ("hello", "permission"):
            async with session.prompt(text) as turn:
                events = [e async for e in turn]
            steps.append((text, (turn.result.stop_reason, turn.result.answer, seen(events))))
        async with session.prompt("hang") as turn:
            async for event in turn:
                if event.type == "message_delta":
                    await turn.cancel()
            steps.append(("cancel", turn.result.stop_reason))
    async with AcpClient(options, channel=remote_channel(url, token=token)) as client:
        loaded = await client.load_session(session.session_id, cwd=cwd)
        steps.append(("session/load", seen(loaded.take_events())))
        async with loaded.prompt("hello") as turn:
            await turn.wait()
        result = turn.result
        said = result.error.message if result.error is not None else result.answer
        steps.append(("prompt after load", (result.stop_reason, said)))
    return steps


# What the steps show against a trivial agent (the SDKs' servers' in the interop tests).
HELLO = [("session_started", None), ("user_message", "hello"), ("message_delta", "Hello there.")]
FIRST_FIVE = [
    ("initialize", True),
    ("session/new", True),
    ("hello", ("end_turn", "Hello there.", [*HELLO, ("turn_completed", None)])),
    (
        "permission",
        (
            "end_turn",
            "yes",
            [
                ("user_message", "permission"),
                ("tool_call_started", None),
                ("permission_requested", None),
                ("permission_resolved", None),
                ("message_delta", "yes"),
                ("notice", None),  # the tool call never ended: the turn closes it
                ("tool_call_finished", None),
                ("turn_completed", None),
            ],
        ),
    ),
    ("cancel", "cancelled"),
]


# The scripted agent behind gemwire's endpoint in the interop tests, and what the SDKs'
# clients (their JSON lines) see of it.
async def scripted_turn(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
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


class ScriptedLoadingAgent(ScriptedAgent):
    """A `ScriptedAgent` that says it loads sessions: ``session/load`` replays one exchange
    (``earlier`` -> ``before``) of the session, then answers."""

    def __init__(self, channel: MemoryChannel, **kwargs: Any) -> None:
        scenario = AgentScenario(agent_capabilities=acp.AgentCapabilities(load_session=True))
        super().__init__(channel, scenario, **kwargs)

    async def respond(self, message: dict[str, Any]) -> None:
        if message["method"] != "session/load":
            await super().respond(message)
            return
        session_id = message["params"]["sessionId"]
        await self.update(
            session_id, "user_message_chunk", content={"type": "text", "text": "earlier"}
        )
        await self.say(session_id, "before")
        await self.send({"id": message["id"], "result": {}})


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
