"""A saved session as a document to read: the model the HTML and Markdown exports render.

Built from the normalized events (Gemini's with `nested_events`), so every agent's sessions,
in every format, read the same, with the secret values of this process's environment masked (`export_masker`). Text chunks are joined, each tool call becomes a `Card` holding its input, output,
diff, the files it changed and, for a subagent's call, the subagent's own items; usage is
added up per model and priced (an estimate) where the price table knows the model.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from gemwire._normalize.masking import Masker, known_secrets
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    ModelUsage,
    Notice,
    SessionStarted,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    Unknown,
    UsageReported,
    UserMessage,
)
from gemwire.sessions._redact import Redactor
from gemwire.sessions._registry import AGENT_NAMES, Loaded, nested_events
from gemwire.sessions.pricing import PriceTable, load_prices, model_usage_cost

__all__ = ("Card", "Text", "Transcript", "TranscriptUsage", "build_transcript", "export_masker")

_UNKNOWN_MODEL = "(unknown model)"

TextKind = Literal["user", "answer", "thought", "info", "warning", "error", "unknown"]


@dataclass
class Text:
    kind: TextKind
    text: str


@dataclass
class Card:
    """A tool call: what it was asked, what came back, what it changed, who it ran."""

    call_id: str
    name: str
    kind: str
    title: str
    input: dict[str, Any]
    status: str | None = None
    output: str | None = None
    error: str | None = None
    diff: str | None = None
    files: list[FileChanged] = field(default_factory=list)
    subagent: str | None = None
    """The session id of the subagent this call ran; its items are ``items``."""
    items: list[Text | Card] = field(default_factory=list)


@dataclass
class TranscriptUsage:
    model: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = 0.0


@dataclass
class Transcript:
    agent: str
    """The agent as people name it (``Gemini``, ``Claude Code``, …)."""
    session_id: str | None
    path: str
    start_time: str | None
    last_updated: str | None
    summary: str | None
    items: list[Text | Card]
    files: list[FileChanged]
    usage: list[TranscriptUsage]
    prices_as_of: str
    prices_source: str

    @property
    def cost_usd(self) -> float:
        return sum(u.cost_usd or 0.0 for u in self.usage)

    @property
    def unpriced(self) -> list[str]:
        return [u.model for u in self.usage if u.cost_usd is None]


class _Builder:
    def __init__(self, table: PriceTable) -> None:
        self.table = table
        self.items: list[Text | Card] = []
        self.cards: dict[str, Card] = {}
        self.files: list[FileChanged] = []
        self.usage: dict[str, TranscriptUsage] = {}

    def _target(self, event: Event) -> list[Text | Card]:
        parent = event.parent_call_id
        card = self.cards.get(parent) if isinstance(parent, str) else None
        return card.items if card is not None else self.items

    def _text(self, target: list[Text | Card], kind: TextKind, text: str) -> None:
        last = target[-1] if target else None
        if kind == "answer" and isinstance(last, Text) and last.kind == "answer":
            last.text += text
        else:
            target.append(Text(kind, text))

    def feed(self, event: Event) -> None:
        target = self._target(event)
        match event:
            case SessionStarted() if isinstance(event.parent_call_id, str):
                card = self.cards.get(event.parent_call_id)
                if card is not None:
                    card.subagent = event.session_id
            case UserMessage():
                self._text(target, "user", event.text)
            case MessageDelta():
                self._text(target, "answer", event.text)
            case ThoughtDelta():
                self._text(target, "thought", event.text)
            case Notice():
                self._text(target, event.severity, event.message)
            case Unknown():
                self._text(target, "unknown", event.raw)
            case ToolCallStarted():
                card = Card(
                    call_id=event.call_id,
                    name=event.name,
                    kind=event.kind,
                    title=event.title,
                    input=event.input,
                )
                self.cards[event.call_id] = card
                target.append(card)
            case ToolCallFinished():
                card = self.cards.get(event.call_id)
                if card is not None:
                    card.status = event.status
                    card.output = event.output
                    card.error = event.error.message if event.error else None
                    card.diff = event.diff
            case FileChanged():
                self.files.append(event)
                card = self.cards.get(event.call_id or "")
                if card is not None:
                    card.files.append(event)
            case UsageReported():
                self._usage(event)

    def _usage(self, event: UsageReported) -> None:
        usage = event.usage
        models = usage.by_model or {
            _UNKNOWN_MODEL: ModelUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cached_tokens=usage.cached_tokens,
                total_tokens=usage.total_tokens,
            )
        }
        for model, counts in models.items():
            row = self.usage.setdefault(model, TranscriptUsage(model=model))
            row.requests += 1
            row.input_tokens += counts.input_tokens
            row.output_tokens += counts.output_tokens
            row.cached_tokens += counts.cached_tokens or 0
            row.total_tokens += counts.total_tokens
            cost = model_usage_cost(self.table, model, counts)
            row.cost_usd = None if cost is None or row.cost_usd is None else row.cost_usd + cost


def export_masker(secrets: Iterable[str] | None) -> Masker:
    """What an export masks: ``secrets``, by default the secret values of this process's
    environment (`gemwire._normalize.masking.known_secrets`; docs/security.md)."""
    return Masker(known_secrets(os.environ) if secrets is None else secrets)


def build_transcript(
    conversation: Loaded,
    *,
    cwd: str | None = None,
    prices: PriceTable | None = None,
    events: Iterable[Event] | None = None,
    secrets: Iterable[str] | None = None,
    redact: bool = False,
) -> Transcript:
    """The session as a `Transcript`, subagents nested under the call that ran them,
    with ``secrets`` masked (`export_masker`) and, with ``redact``, what `Redactor` takes out."""
    table = prices if prices is not None else load_prices()
    masker = export_masker(secrets)
    builder = _Builder(table)
    if events is None:
        events = nested_events(conversation, cwd=cwd)
    redactor = Redactor() if redact else None
    for event in events:
        masked = masker.event(event) if masker else event
        builder.feed(redactor.event(masked) if redactor else masked)
    summary = conversation.summary
    if summary and redactor:
        summary = redactor.text(summary)
    return Transcript(
        agent=AGENT_NAMES.get(conversation.agent, conversation.agent),
        session_id=conversation.session_id,
        path=redactor.text(conversation.path) if redactor else conversation.path,
        start_time=conversation.start_time,
        last_updated=conversation.last_updated,
        summary=masker.text(summary) if summary else summary,
        items=builder.items,
        files=builder.files,
        usage=list(builder.usage.values()),
        prices_as_of=table.as_of,
        prices_source=table.source,
    )
