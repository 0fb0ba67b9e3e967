"""The one exception tree of gemwire.

Every error gemwire raises on purpose derives from `GemwireError`; errors from the
libraries underneath (msgspec, anyio, OSError) are mapped at the layer boundary and
chained with ``raise ... from exc``.

    GemwireError
    ├── AgentNotFound              an agent executable is missing or cannot be run
    │   └── GeminiNotFound         ... the Gemini CLI; the message carries the install command
    ├── ProtocolError              the bytes are not the protocol (only raised in strict mode;
    │   │                          lenient decoding reports problems as records instead)
    │   └── MalformedMessageError  a line that is not a known message of the known shape
    └── ScenarioError              a scripted-model scenario is invalid (gemwire.testing)

Every ``__init__`` takes the message first and context as keyword arguments with
defaults, so exceptions pickle and copy (``type(e)(*e.args)``).
"""

from __future__ import annotations

__all__ = (
    "AgentNotFound",
    "GeminiNotFound",
    "GemwireError",
    "MalformedMessageError",
    "ProtocolError",
    "ScenarioError",
)


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


class ProtocolError(GemwireError):
    """The bytes an agent sent are not the protocol."""


class MalformedMessageError(ProtocolError):
    """A line that is not a known message of the known shape (strict mode).

    ``line`` is the offending line (decoded, invalid bytes replaced), ``lineno`` its
    1-based number in the stream.
    """

    def __init__(self, message: str, *, line: str = "", lineno: int = 0) -> None:
        super().__init__(f"line {lineno}: {message}" if lineno else message)
        self.line = line
        self.lineno = lineno


class ScenarioError(GemwireError, ValueError):
    """A scripted-model scenario is invalid; the message names the problem and where.

    Also a `ValueError`, so msgspec reports one raised while decoding with its JSON path.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(f"{source}: {message}" if source else message)
        self.source = source
