"""Where Qwen Code keeps sessions: ``<runtime>/projects/<project slug>/chats/<sessionId>.jsonl``.

``<runtime>`` is ``QWEN_RUNTIME_DIR``, else ``QWEN_HOME``, else ``~/.qwen`` (Qwen Code's
``Storage.getRuntimeBaseDir``; a leading ``~`` is the user's home, a relative path is taken
from the current directory); the slug is the project folder with every character but ASCII
letters and digits replaced by ``-`` (``sanitizeCwd``), lowercased first on Windows (unlike
Claude Code's). Archived sessions (``chats/archive``) are not listed.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path

from gemwire.sessions._jsonl_home import JsonlHome, path_slug
from gemwire.sessions.qwen._conversation import QwenConversation

__all__ = ("QwenHome", "project_slug", "runtime_dir")


def project_slug(root: str, platform: str = sys.platform) -> str:
    """Qwen Code's folder name for a project (``sanitizeCwd``): `path_slug` of the root,
    lowercased first on Windows (``os.platform() === "win32"``, Qwen Code 0.24.4).

    >>> project_slug(r"C:\\Users\\Ana\\My_App", "win32"), project_slug("/Users/Ana", "darwin")
    ('c--users-ana-my-app', '-Users-Ana')
    """
    return path_slug(root.lower() if platform == "win32" else root)


def _resolve(configured: str) -> Path:
    """A configured folder as Qwen Code resolves it (``Storage.resolvePath``)."""
    if configured == "~" or configured.startswith(("~/", "~\\")):
        return Path.home().joinpath(*[s for s in re.split(r"[/\\]+", configured[2:]) if s])
    return Path(os.path.abspath(configured))


def runtime_dir() -> Path:
    """The folder Qwen Code writes sessions under, found as it finds it (its env vars
    first; tests/unit/sessions/test_qwen_sessions.py shows each)."""
    for name in ("QWEN_RUNTIME_DIR", "QWEN_HOME"):
        configured = os.environ.get(name)
        if configured:
            return _resolve(configured)
    return Path.home() / ".qwen"


class QwenHome(JsonlHome[QwenConversation]):
    """Qwen Code's sessions; its `SessionSource`.

    Args:
        home: the folder holding ``.qwen``; default `runtime_dir` (``QWEN_RUNTIME_DIR``,
            else ``QWEN_HOME``, else ``~/.qwen``).
        platform: the OS whose folder names to expect (`project_slug`); default this one.

    >>> QwenHome("/nonexistent").sessions("/some/project")
    []

    A file is Qwen Code's when its first record starts with the ``uuid`` Qwen Code writes
    first (Claude Code's, with ``type`` or ``parentUuid``; Gemini's, with ``sessionId``):

    >>> home = QwenHome("/nonexistent")
    >>> home.recognises(b'{"uuid":"u","parentUuid":null,"sessionId":"s","type":"user"}')
    True
    >>> home.recognises(b'{"type":"user"}\\n'), home.recognises(b"x")
    (False, False)
    """

    agent = "qwen"
    name = "Qwen Code"

    def __init__(
        self, home: str | os.PathLike[str] | None = None, *, platform: str = sys.platform
    ) -> None:
        runtime = Path(home) / ".qwen" if home is not None else runtime_dir()
        super().__init__(
            QwenConversation,
            runtime,
            runtime / "projects",
            first_keys=(b'{"uuid":',),
            chats="chats",
            slug=functools.partial(project_slug, platform=platform),
        )
