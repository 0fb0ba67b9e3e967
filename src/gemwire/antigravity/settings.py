"""What the adapter reads from its environment, where it keeps things, and its modes.

The model is configured as Gemini CLI's is, so one environment drives both:
``GEMINI_API_KEY`` (else ``GOOGLE_API_KEY``), ``GOOGLE_GEMINI_BASE_URL`` (the API's base URL,
Google's own when unset) and ``GEMINI_MODEL`` (else the SDK's default). Everything the
harness writes goes under ``$HOME/.gemini/antigravity``, as Antigravity's own default: the
conversations' databases in ``conversations/``, its transcripts in ``brain/``, and the
``webm_encoder`` it extracts on every start in ``bin/``.

    >>> settings = Settings.from_environ({"HOME": "/h", "GEMINI_API_KEY": "k"})
    >>> settings.save_dir, settings.model, settings.base_url
    ('/h/.gemini/antigravity/conversations', 'gemini-3.8-flash', None)
    >>> decide("default", "view_file"), decide("default", "create_file")
    ('allow', 'ask')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from gemwire.errors import AuthFailed
from gemwire.wire import acp

__all__ = ("DEFAULT_MODEL", "MODES", "Decision", "Settings", "app_data_dir", "decide")

DEFAULT_MODEL = "gemini-3.8-flash"
"""The SDK's default model (``google.antigravity.models.DEFAULT_MODEL``, 0.1.22)."""

CONTEXT_WINDOW = 1_048_576
"""The context window of the Gemini models Antigravity runs on, in tokens."""

Decision = Literal["allow", "ask", "deny"]

_READ_ONLY = frozenset({"view_file", "list_directory", "search_directory", "find_file"})
"""The SDK's read-only tools (``BuiltinTools.read_only()``)."""

MODES: tuple[acp.SessionMode, ...] = (
    acp.SessionMode(
        id="default",
        name="Ask",
        description="Reads run; every other tool call is asked (policy.safe_defaults).",
    ),
    acp.SessionMode(
        id="confirm_run_command",
        name="Confirm commands",
        description="Everything runs but shell commands, which are asked "
        "(policy.confirm_run_command).",
    ),
    acp.SessionMode(
        id="allow_all",
        name="Allow all",
        description="Every tool call runs without asking (policy.allow_all).",
    ),
    acp.SessionMode(
        id="read_only",
        name="Read only",
        description="Reads run; every other tool call is denied.",
    ),
)
"""The policies Antigravity offers, as ACP session modes."""


def decide(mode: str, tool: str) -> Decision:
    """What ``mode`` does with a call of ``tool`` (the SDK's name)."""
    if mode == "allow_all":
        return "allow"
    if mode == "confirm_run_command":
        return "ask" if tool == "run_command" else "allow"
    if tool in _READ_ONLY:
        return "allow"
    return "deny" if mode == "read_only" else "ask"


def app_data_dir(environ: Mapping[str, str]) -> str:
    """Where the harness keeps its data: ``$HOME/.gemini/antigravity``."""
    home = environ.get("HOME") or str(Path.home())
    return str(Path(home) / ".gemini" / "antigravity")


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    app_data_dir: str
    api_key: str
    base_url: str | None
    model: str

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Raises `AuthFailed` when neither key is set."""
        env = os.environ if environ is None else environ
        key = env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY")
        if not key:
            raise AuthFailed("set GEMINI_API_KEY (or GOOGLE_API_KEY) for Antigravity's model")
        return cls(
            app_data_dir=app_data_dir(env),
            api_key=key,
            base_url=env.get("GOOGLE_GEMINI_BASE_URL") or None,
            model=env.get("GEMINI_MODEL") or DEFAULT_MODEL,
        )

    @property
    def save_dir(self) -> str:
        return str(Path(self.app_data_dir) / "conversations")
