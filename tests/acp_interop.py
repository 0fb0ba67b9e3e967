"""The seven steps of the ACP transport interop tests through gemwire's own client
(`AcpClient` over `remote_channel`), against any ACP endpoint: initialize, session/new,
a streamed prompt, a permission round trip, cancel, session/load on a new connection
and a prompt on the loaded session; what each step showed."""

from __future__ import annotations

from typing import Any

from gemwire.events import Event
from gemwire.runners.acp import AcpClient, AcpOptions
from gemwire.runners.acp.remote import remote_channel

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
        steps.append(("prompt after load", (turn.result.stop_reason, turn.result.answer)))
    return steps
