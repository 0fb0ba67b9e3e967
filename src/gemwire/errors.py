"""The one exception tree of gemwire.

Every error gemwire raises on purpose derives from `GemwireError`; errors from the
libraries underneath (msgspec, anyio, OSError) are mapped at the layer boundary and
chained with ``raise ... from exc``.

    GemwireError
    ├── AgentNotFound        an agent executable is missing or cannot be run
    │   └── GeminiNotFound   ... the Gemini CLI; the message carries the install command
    └── ScenarioError        a scripted-model scenario is invalid (gemwire.testing)

Every ``__init__`` takes the message first and context as keyword arguments with
defaults, so exceptions pickle and copy (``type(e)(*e.args)``).
"""

from __future__ import annotations

__all__ = ("AgentNotFound", "GeminiNotFound", "GemwireError", "ScenarioError")


class GemwireError(Exception):
    """Base class of every error gemwire raises."""


class AgentNotFound(GemwireError):
    """An agent executable is missing or cannot be run."""

    def __init__(self, message: str, *, executable: str | None = None) -> None:
        super().__init__(message)
        self.executable = executable


class GeminiNotFound(AgentNotFound):
    """The Gemini CLI is not installed where gemwire looked."""

    INSTALL_COMMAND = "npm install -g @google/gemini-cli"


class ScenarioError(GemwireError, ValueError):
    """A scripted-model scenario is invalid; the message names the problem and where.

    Also a `ValueError`, so msgspec reports one raised while decoding with its JSON path.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(f"{source}: {message}" if source else message)
        self.source = source
