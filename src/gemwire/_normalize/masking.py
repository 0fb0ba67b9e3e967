"""The secret values gemwire knows, and masking them in what it emits.

A secret value gemwire knows is one of the credentials it was given (`AcpClient`'s
``credentials``), or the value of a variable of the agent's environment whose name marks a
secret: it ends in ``_API_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD`` (or is one of those
words), or in ``_ACCESS_KEY``, ``_SECRET_KEY`` or ``_PRIVATE_KEY`` (``AWS_SECRET_ACCESS_KEY``). Every variable the agents gemwire pins read a key from is named so
(``GEMINI_API_KEY``, ``GOOGLE_API_KEY``, ``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``,
``CLAUDE_CODE_OAUTH_TOKEN``, ``OPENAI_API_KEY``, ``CODEX_API_KEY``, ``DASHSCOPE_API_KEY``,
``OPENROUTER_API_KEY``). A value shorter than `MIN_SECRET_CHARS` is none: masking ``1`` or
``true`` everywhere would hide more than it protects.

Values are matched exactly, as CI systems mask logs: a secret split across two events,
encoded (base64, URL-escaped) or cut short is not caught (docs/security.md).

    >>> masker = Masker(known_secrets({"OPENAI_API_KEY": "sk-test-0123456789", "HOME": "/root"}))
    >>> masker.text("key=sk-test-0123456789 home=/root")
    'key=*** home=/root'
    >>> masker.data({"env": ["OPENAI_API_KEY=sk-test-0123456789"]})
    {'env': ['OPENAI_API_KEY=***']}

With no secret known a `Masker` is false, and callers skip it: what gemwire emits then costs
nothing more. With secrets, an event without one is returned as it is (the same object).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

import msgspec

from gemwire.events import (
    AuthStatus,
    Event,
    MessageDelta,
    Notice,
    PermissionRequested,
    PlanUpdated,
    SessionMessage,
    SessionUpdated,
    SubagentUpdated,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallUpdated,
    TurnCompleted,
    Unknown,
    UserMessage,
)

__all__ = (
    "MASK",
    "MIN_SECRET_CHARS",
    "SECRET_NAME_ENDINGS",
    "TEXT_FIELDS",
    "Masker",
    "is_secret_name",
    "known_secrets",
)

MASK = "***"
"""What a secret value is replaced with."""

MIN_SECRET_CHARS = 8
"""A value shorter than this is not treated as a secret."""

SECRET_NAME_ENDINGS = (
    "_API_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_ACCESS_KEY",
    "_SECRET_KEY",
    "_PRIVATE_KEY",
)
"""A variable whose name ends so (case aside) holds a secret."""

T = TypeVar("T")
E = TypeVar("E", bound=Event)

TEXT_FIELDS: dict[type[Any], tuple[str, ...]] = {
    UserMessage: ("text",),
    MessageDelta: ("text",),
    ThoughtDelta: ("text",),
    ToolCallStarted: ("title", "input"),
    ToolCallUpdated: ("content",),
    ToolCallFinished: ("output", "error", "diff"),
    PermissionRequested: ("title", "diff", "content"),
    PlanUpdated: ("entries", "markdown"),
    SubagentUpdated: ("title", "description"),
    SessionMessage: ("text",),
    AuthStatus: ("label", "detail"),
    Notice: ("message",),
    TurnCompleted: ("answer", "error"),
    SessionUpdated: ("data",),
    Unknown: ("raw",),
}
"""The fields of each event type that carry text an agent, a model or a tool wrote: where a
secret can show up. Names, ids, paths and numbers are left as they are."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret.

    >>> names = ("GEMINI_API_KEY", "GH_TOKEN", "TOKEN", "AWS_SECRET_ACCESS_KEY", "TOKENIZERS")
    >>> [is_secret_name(n) for n in names]
    [True, True, True, True, False]
    """
    return ("_" + name.upper()).endswith(SECRET_NAME_ENDINGS)


def known_secrets(
    environment: Mapping[str, str], credentials: Iterable[object] = ()
) -> frozenset[str]:
    """The secret values of an agent's ``environment`` and of its ``credentials`` (string
    values; anything else is ignored), each at least `MIN_SECRET_CHARS` long."""
    found = [value for name, value in environment.items() if is_secret_name(name)]
    found += [value for value in credentials if isinstance(value, str)]
    return frozenset(value for value in found if len(value) >= MIN_SECRET_CHARS)


class Masker:
    """Replaces every one of ``secrets`` with `MASK`: in text, in JSON-like data, in events."""

    __slots__ = ("_ordered", "secrets")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = frozenset(s for s in secrets if s)
        # Longest first: a secret that contains another is masked whole.
        self._ordered = sorted(self.secrets, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._ordered)

    def __repr__(self) -> str:
        return f"Masker({len(self._ordered)} secrets)"  # never the values themselves

    def text(self, text: str) -> str:
        """``text`` with every secret masked (the same object when it holds none)."""
        for secret in self._ordered:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def data(self, value: T) -> T:
        """``value`` with every secret masked in its strings, at any depth: dict keys and
        values, list and tuple items, the fields of a msgspec Struct. Unchanged parts are
        the same objects; so is ``value`` when it holds no secret."""
        return cast(T, self._masked(value)) if self._ordered else value

    def event(self, event: E) -> E:
        """``event`` with every secret masked in its text (`TEXT_FIELDS`); the same
        object when none holds one."""
        changes: dict[str, object] = {}
        for name in TEXT_FIELDS.get(type(event), ()):
            value = getattr(event, name)
            masked = self.text(value) if type(value) is str else self._masked(value)
            if masked is not value:
                changes[name] = masked
        return msgspec.structs.replace(event, **changes) if changes else event

    def events(self, events: list[Event]) -> list[Event]:
        """The events with every secret masked in their text; the same list when none
        holds one."""
        if not self._ordered:
            return events
        out: list[Event] | None = None
        for n, event in enumerate(events):
            masked = self.event(event)
            if masked is not event:
                out = out or list(events)
                out[n] = masked
        return events if out is None else out

    def _masked(self, value: object) -> object:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, msgspec.Struct):
            return self._struct(value)
        if isinstance(value, dict):
            return self._dict(value)
        if isinstance(value, list | tuple):
            return self._sequence(value)
        return value

    def _struct(self, value: msgspec.Struct) -> msgspec.Struct:
        changes: dict[str, object] = {}
        for name in value.__struct_fields__:
            field = getattr(value, name)
            masked = self._masked(field)
            if masked is not field:
                changes[name] = masked
        return msgspec.structs.replace(value, **changes) if changes else value

    def _dict(self, value: dict[object, object]) -> dict[object, object]:
        items = [(k, v, self._masked(k), self._masked(v)) for k, v in value.items()]
        if all(k is mk and v is mv for k, v, mk, mv in items):
            return value
        return {mk: mv for _, _, mk, mv in items}

    def _sequence(self, value: list[object] | tuple[object, ...]) -> object:
        masked = [self._masked(item) for item in value]
        if all(m is v for m, v in zip(masked, value, strict=True)):
            return value
        return masked if isinstance(value, list) else tuple(masked)
