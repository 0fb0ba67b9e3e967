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
from gemwire.sessions._source import AGENT_NAMES, LoadedSession
from gemwire.sessions.gemini import Conversation
from gemwire.sessions.pricing import PriceTable

__all__ = ("EXPORT_FORMATS", "ExportFormat", "export_lines")

ExportFormat = Literal["events", "claude", "html", "markdown"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("events", "claude", "html", "markdown")


def export_lines(
    conversation: LoadedSession,
    fmt: ExportFormat,
    *,
    cwd: str | None = None,
    prices: PriceTable | None = None,
    agent: str = "gemini",
) -> Iterator[bytes]:
    """``conversation`` in ``fmt``: normalized events or Claude-compatible messages (JSON
    lines, each ending in a newline), or a transcript (one HTML page, or Markdown).

    Events are masked with the secret values of this process's environment, as the
    transcripts are by default (docs/security.md). Only the events of a session not Gemini's
    (``agent`` names whose) can be exported yet: any other format raises `InvalidOptions`
    (when the iterator is first advanced).
    """
    if fmt == "events":
        masker = Masker(known_secrets(os.environ))
        for event in conversation.events(cwd=cwd):
            yield encode_event(masker.event(event) if masker else event)
        return
    if not isinstance(conversation, Conversation):
        whose = AGENT_NAMES.get(agent, agent)
        raise InvalidOptions(
            f"--format {fmt} of a {whose} session is not supported yet (--format events is)"
        )
    if fmt in ("html", "markdown"):
        render = to_html if fmt == "html" else to_markdown
        yield render(conversation, cwd=cwd, prices=prices).encode()
        return
    message: dict[str, Any]
    for message in to_unified_messages(conversation.messages, conversation.originals):
        yield msgspec.json.encode(message) + b"\n"
