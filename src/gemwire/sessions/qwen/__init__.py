"""Qwen Code's saved sessions (Qwen Code 0.24.4): `QwenHome`, its source.

- `_conversation` — `QWEN` (its `JsonlFormat`), `QwenConversation`, `load_qwen_session`,
  `read_qwen_info`;
- `_home` — the home (``QWEN_RUNTIME_DIR``, ``QWEN_HOME``) and its project slugs.
"""

from __future__ import annotations

from gemwire.sessions.qwen._conversation import (
    QWEN,
    QwenConversation,
    load_qwen_session,
    read_qwen_info,
)
from gemwire.sessions.qwen._home import QwenHome, project_slug, runtime_dir

__all__ = (
    "QWEN",
    "QwenConversation",
    "QwenHome",
    "load_qwen_session",
    "project_slug",
    "read_qwen_info",
    "runtime_dir",
)
