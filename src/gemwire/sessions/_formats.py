"""One loaded session in each export format, as bytes: what ``gemwire sessions export`` writes
and what the server's ``GET /v1/saved-sessions/{agent}/{id}`` answers with.

    >>> EXPORT_FORMATS
    ('events', 'claude', 'html', 'markdown')
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

import msgspec

from gemwire._normalize.masking import Masker, known_secrets
from gemwire.errors import InvalidOptions
from gemwire.events import encode_event
from gemwire.sessions._export import to_unified_messages
from gemwire.sessions._html import to_html
from gemwire.sessions._markdown import to_markdown
from gemwire.sessions._redact import Redactor
from gemwire.sessions._registry import AGENT_NAMES, Loaded
from gemwire.sessions.gemini import Conversation
from gemwire.sessions.pricing import PriceTable

__all__ = ("EXPORT_FORMATS", "ExportFormat", "export_lines", "whose")

ExportFormat = Literal["events", "claude", "html", "markdown"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("events", "claude", "html", "markdown")


def export_lines(
    conversation: Loaded,
    fmt: ExportFormat,
    *,
    cwd: str | None = None,
    prices: PriceTable | None = None,
    redact: bool = False,
) -> Iterator[bytes]:
    """``conversation`` in ``fmt``: normalized events or Claude-compatible messages (JSON
    lines, each ending in a newline), or a transcript (one HTML page, or Markdown).

    Events are masked with the secret values of this process's environment, as the
    transcripts are by default (docs/security.md); ``redact`` also takes out what
    `Redactor` finds (keys, tokens, e-mail addresses, the home folder). Claude-compatible
    messages exist for Gemini's sessions only: another agent's raises `InvalidOptions`
    (when the iterator is first advanced).
    """
    redactor = Redactor() if redact else None
    if fmt == "events":
        masker = Masker(known_secrets(os.environ))
        for event in conversation.events(cwd=cwd):
            masked = masker.event(event) if masker else event
            yield encode_event(redactor.event(masked) if redactor else masked)
        return
    if fmt in ("html", "markdown"):
        render = to_html if fmt == "html" else to_markdown
        yield render(conversation, cwd=cwd, prices=prices, redact=redact).encode()
        return
    if not isinstance(conversation, Conversation):
        raise InvalidOptions(
            f"--format {fmt} of a {whose(conversation)} session is not supported yet "
            "(events, html and markdown are)"
        )
    message: dict[str, Any]
    for message in to_unified_messages(conversation.messages, conversation.originals):
        yield msgspec.json.encode(redactor.value(message) if redactor else message) + b"\n"


def whose(conversation: Loaded) -> str:
    """The agent that wrote ``conversation``, as people name it (``Claude Code``, ...)."""
    return AGENT_NAMES.get(conversation.agent, conversation.agent)
