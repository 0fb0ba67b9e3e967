"""What each provider API of the scripted model provides to the router in model_server.py.

A dialect turns a scenario turn into the bytes its API streams, and reads the user's text
out of a request (for ``when``). Each one lives in a module of its own (_gemini.py,
_anthropic.py, _openai_chat.py, _openai_responses.py) and names things as its API does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from gemwire.testing.scenario import (
    Chunk,
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Hang,
    Reply,
    Text,
    Thought,
    Truncate,
)

__all__ = (
    "SIDE_CALL_TEXT",
    "SUGGESTION_REQUEST",
    "TITLE_TEXT",
    "Dialect",
    "Piece",
    "Step",
    "call_id",
    "is_side_request",
    "pieces",
    "side_call_text",
    "sse",
)

# One text satisfies every structured side call the agents make: Gemini CLI's model router /
# classifier reads reasoning + model_choice, its next-speaker check (and Qwen Code's, a fork)
# reads next_speaker.
SIDE_CALL_TEXT = json.dumps(
    {
        "reasoning": "scripted by gemwire",
        "model_choice": "flash",
        "complexity_reasoning": "scripted by gemwire",
        "complexity_score": 10,
        "next_speaker": "user",
    }
)

TITLE_TEXT = "Scripted session"
"""The answer to a request for a session's title. OpenCode 1.18.33 asks its title agent
(``Generate a title for this conversation:``) for a plain line, and keeps the first
non-empty line of the answer (cut at 100 characters) as the title: `SIDE_CALL_TEXT` would
become a title of JSON."""

_TITLE_REQUEST = "Generate a title for this conversation:"
SUGGESTION_REQUEST = "[SUGGESTION MODE:"
"""How the request Claude Code (2.1.318, in claude-agent-acp 0.101.0) sends after a turn for
a prompt suggestion ends: the conversation so far, tools and all, streamed like a turn, and
a last user message that begins so. It is not a turn of the scenario."""
CODEX_TITLE_REQUEST = "Your task is to generate a very short title for a conversation"
"""How the request codex-acp 2.6.0 sends beside a session's first turn, on a thread of its
own, for the session's title begins: streamed like a turn, one user text holding the user's
first message too (so a scripted turn chosen by the prompt's text would take it), answered
with a JSON object. It is not a turn of the scenario."""


def is_side_request(texts: list[str]) -> bool:
    """Whether a request streamed like a turn whose user texts are ``texts`` is a side call
    (`SUGGESTION_REQUEST`, `CODEX_TITLE_REQUEST`).

    >>> is_side_request(["go", "[SUGGESTION MODE: Suggest what the user might type next]"])
    True
    >>> is_side_request(["go"])
    False
    """
    return bool(texts) and texts[-1].lstrip().startswith((SUGGESTION_REQUEST, CODEX_TITLE_REQUEST))


def side_call_text(texts: list[str]) -> str:
    r"""What a side call whose user texts are ``texts`` is answered with: `TITLE_TEXT` for
    a title request (as codex-acp's JSON object for its own), nothing for a prompt
    suggestion (Claude Code's, whose instructions say an empty answer suggests nothing),
    else `SIDE_CALL_TEXT`.

    >>> side_call_text(["Generate a title for this conversation:\n", "go"])
    'Scripted session'
    >>> side_call_text(["go", "[SUGGESTION MODE: Suggest what the user might type next]"])
    ''
    """
    if texts and texts[-1].lstrip().startswith(SUGGESTION_REQUEST):
        return ""
    if texts and texts[-1].lstrip().startswith(CODEX_TITLE_REQUEST):
        return json.dumps({"title": TITLE_TEXT})
    return TITLE_TEXT if any(t.startswith(_TITLE_REQUEST) for t in texts) else SIDE_CALL_TEXT


Step = bytes | Delay | Hang | Truncate
"""What the server does next while streaming: send these bytes, pause, hang, or cut."""

Piece = Text | Thought | FunctionCall | Delay | Hang | Truncate


class Dialect(Protocol):
    """A provider API, as the router needs it."""

    TRUNCATED: bytes
    """Half an event: what a cut stream ends with."""

    def user_texts(self, body: Any) -> list[str]:
        """The text of the user's side of the conversation in a request."""
        ...

    def stream(self, reply: Reply, model: str, turn: int, request: Any) -> list[Step]:
        """The steps that stream ``reply`` (turn ``turn`` of the scenario) in answer to
        ``request`` (its JSON body)."""
        ...

    def error(self, fail: Fail) -> tuple[dict[str, str], Any]:
        """The headers and JSON body of an HTTP error, as the real API sends them."""
        ...


def pieces(chunks: Sequence[Chunk]) -> Iterator[Piece]:
    """The chunks with parallel calls spelled out one by one (the providers other than
    Gemini stream each call as a block, or item, of its own)."""
    for chunk in chunks:
        if isinstance(chunk, FunctionCalls):
            yield from chunk.calls
        else:
            yield chunk


def user_texts(messages: Any, text_type: str) -> list[str]:
    """The texts of the user's messages: a message's content is a string, or parts of which
    those of type ``text_type`` carry text (the same shape in every non-Gemini API)."""
    texts: list[str] = []
    for message in messages or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        texts.extend(
            part["text"]
            for part in content or []
            if part.get("type") == text_type and isinstance(part.get("text"), str)
        )
    return texts


def call_id(call: FunctionCall, turn: int, index: int, prefix: str) -> str:
    """The call's id, or a stable one made from where it is (recordings stay the same)."""
    return call.id if call.id is not None else f"{prefix}gemwire_{turn}_{index}"


def sse(data: Any, event: str | None = None, *, end: bytes = b"\n\n") -> bytes:
    """One server-sent event: ``data`` as JSON, named ``event`` (Anthropic and the Responses
    API name each event); the Gemini API ends its events with ``\\r\\n\\r\\n``."""
    head = b"event: %s\n" % event.encode() if event else b""
    return head + b"data: " + json.dumps(data).encode() + end
