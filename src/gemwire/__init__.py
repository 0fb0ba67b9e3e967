"""gemwire: run Gemini CLI headlessly, and any ACP agent, as one typed, normalized event stream.

The package's layers are its folders (see DESIGN.md): ``wire`` (exact upstream types),
``protocol`` (sans-IO parsing), ``runners`` (the async API), ``sessions`` (saved sessions),
``testing`` (the offline test kit) and ``cli``.
"""

from __future__ import annotations

from gemwire._version import __version__
from gemwire.errors import (
    AgentNotFound,
    GeminiNotFound,
    GemwireError,
    MalformedMessageError,
    ProtocolError,
    ScenarioError,
)
from gemwire.runners import replay_gemini_stream

__all__ = (
    "AgentNotFound",
    "GeminiNotFound",
    "GemwireError",
    "MalformedMessageError",
    "ProtocolError",
    "ScenarioError",
    "__version__",
    "replay_gemini_stream",
)
