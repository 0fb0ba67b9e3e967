"""What the server answers with, as frozen Structs: its agents and its sessions (the shapes
the server encodes, `gemwire.serve_api`), and the envelopes of a session's event stream
(docs/server.md)."""

from __future__ import annotations

from typing import Any

import msgspec

from gemwire._normalize.notices import notice
from gemwire.events import Event
from gemwire.serve_api import AgentEntry, SessionView

__all__ = ("Envelope", "RemoteAgent", "RemoteSessionInfo", "decode_envelope")


RemoteAgent = AgentEntry
"""An agent the server offers (``GET /v1/agents``); ``command`` has secrets masked: the
server's own `gemwire.serve_api.AgentEntry`."""

RemoteSessionInfo = SessionView
"""A session as the server describes it (``GET /v1/sessions/{id}``): the server's own
`gemwire.serve_api.SessionView`. ``id`` is the server's (``s_`` + 16 hex),
``agent_session_id`` the agent's own."""


class Envelope(msgspec.Struct, frozen=True):
    """One message of a session's stream: an event, or server-side ``state`` (what the
    event vocabulary lacks, e.g. ``{"status": "running"}``)."""

    seq: int
    event: Event | None = None
    state: dict[str, Any] | None = None


class _LooseEnvelope(msgspec.Struct, frozen=True):
    seq: int
    event: dict[str, Any] | None = None
    state: dict[str, Any] | None = None


_decoder = msgspec.json.Decoder(Envelope)
_loose = msgspec.json.Decoder(_LooseEnvelope)


def decode_envelope(data: str | bytes) -> Envelope:
    """An envelope; an event of a type this gemwire does not know (a newer server's)
    comes as a ``notice`` in its place, so the sequence stays whole. Raises
    `msgspec.DecodeError` when ``data`` is not an envelope at all.

    >>> decode_envelope('{"seq": 3, "event": {"type": "message_delta", "agent": "a", "text": "hi"}}')
    Envelope(seq=3, event=MessageDelta(agent='a', text='hi'), state=None)
    >>> decode_envelope('{"seq": 4, "event": {"type": "hologram", "agent": "a"}}').event.message
    "the server sent an event gemwire does not know ('hologram'); skipped"
    """
    try:
        return _decoder.decode(data)
    except msgspec.ValidationError:
        loose = _loose.decode(data)  # the rare path: only what failed is decoded twice
    raw = loose.event or {}
    kind, agent = raw.get("type"), raw.get("agent")
    message = f"the server sent an event gemwire does not know ({kind!r}); skipped"
    session = raw.get("session_id")
    warning = notice(
        agent if isinstance(agent, str) else "remote",
        session if isinstance(session, str) else None,
        message,
    )
    return Envelope(
        seq=loose.seq, event=warning if loose.event is not None else None, state=loose.state
    )
