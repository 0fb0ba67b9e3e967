"""`Redactor`: what ``gemwire sessions export --redact`` takes out of a session before sharing
it: API keys, tokens, e-mail addresses and the user's home folder (docs/sessions.md lists
the rules).

Unlike masking (`gemwire._normalize.masking`), which replaces the exact secret values gemwire
knows, redaction goes by the shape of the text, so it also catches a key gemwire was never
given, at the price of the odd false match. Each rule replaces what it matches with a label
in brackets; the home folder becomes ``~``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from gemwire.events import Event

__all__ = ("RULES", "Redactor")

E = TypeVar("E", bound=Event)

RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "a secret assigned to a variable named like one (`OPENAI_API_KEY=…`, `password: …`)",
        re.compile(
            r"(?i)\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY)"
            r"[\"']?\s*[=:]\s*[\"']?)[^\s\"',;]{6,}"
        ),
        r"\1[secret]",
    ),
    (
        (
            "an API key in a provider's format: OpenAI and Anthropic (`sk-…`), Google "
            "(`AIza…`), GitHub (`ghp_…`, `github_pat_…`), GitLab (`glpat-…`), Slack (`xox?-…`), "
            "AWS (`AKIA…`), Hugging Face (`hf_…`)"
        ),
        re.compile(
            r"\b(?:sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|gh[pousr]_[A-Za-z0-9]{30,}"
            r"|github_pat_[A-Za-z0-9_]{22,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
            r"|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{30,})"
        ),
        "[API key]",
    ),
    (
        "a bearer token (`Authorization: Bearer …`) or a JSON Web Token (`eyJ….eyJ….…`)",
        re.compile(
            r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{12,}"
            r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
        ),
        r"\1[token]",
    ),
    (
        "an e-mail address",
        re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
        "[e-mail]",
    ),
)
"""Each rule: what it catches, its pattern, what replaces it."""


class Redactor:
    """Redacts texts, and every text of an event.

    Args:
        home: the user's home folder, replaced by ``~`` where a path starts with it
            (default: this user's).

    >>> redact = Redactor(home="/home/ann")
    >>> redact.text("ann@example.com ran OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx in /home/ann/app")
    '[e-mail] ran OPENAI_API_KEY=[secret] in ~/app'
    >>> redact.text("curl -H 'Authorization: Bearer abcdef1234567890' /home/anne")
    "curl -H 'Authorization: Bearer [token]' /home/anne"
    """

    def __init__(self, home: str | None = None) -> None:
        folder = home if home is not None else str(Path.home())
        self._home = (
            re.compile(r"(?<![\w.~<-])" + re.escape(folder.rstrip("/")) + r"(?![\w.~-])")
            if len(Path(folder).parts) > 1  # never "/" itself
            else None
        )

    def text(self, text: str) -> str:
        for _, pattern, label in RULES:
            text = pattern.sub(label, text)  # a group that did not match stands for ""
        return self._home.sub("~", text) if self._home is not None else text

    def value(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings) with every string redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def event(self, event: E) -> E:
        """``event`` with every text in it redacted."""
        return msgspec.convert(self.value(msgspec.to_builtins(event)), type=type(event))
