"""What is particular to Claude Code's ACP agent (claude-code-acp), in one place.

- **As root, only in a sandbox.** claude-code-acp 0.16.2 lets Claude Code skip its
  permission checks (the ``bypassPermissions`` mode) unless it runs as root, or when
  ``IS_SANDBOX`` is set to anything at all. Claude Code itself, as root, refuses to start
  with that allowed unless ``IS_SANDBOX`` is exactly ``1`` (or ``CLAUDE_CODE_BUBBLEWRAP=1``):
  it exits ("--dangerously-skip-permissions cannot be used with root/sudo privileges",
  on the agent's stderr), and claude-code-acp answers ``session/new`` with "Internal
  error", details "Query closed before response received", which says nothing of why.
  As root, ``IS_SANDBOX`` unset works (no bypass mode is offered); ``IS_SANDBOX=true``
  does not.
"""

from __future__ import annotations

from collections.abc import Mapping

from gemwire._portable import effective_user_id

__all__ = ("ROOT_FIX", "ROOT_REFUSAL", "explain_root_refusal", "refuses_root")

QUERY_CLOSED = "Query closed before response received"
"""What claude-code-acp says when Claude Code exited before answering it."""

ROOT_REFUSAL = (
    "as root, Claude Code exits when it may skip permission checks (claude-code-acp allows "
    "that whenever IS_SANDBOX is set), unless IS_SANDBOX=1 says it runs in a sandbox"
)
"""The cause, in words."""
ROOT_FIX = (
    "set IS_SANDBOX=1 (in a container or VM you trust), or unset IS_SANDBOX, or run as a "
    "user other than root"
)
"""The fix, in words."""


def _root(uid: int | None) -> bool:
    return (effective_user_id() if uid is None else uid) == 0


def _sandboxed(environ: Mapping[str, str]) -> bool:
    return environ.get("IS_SANDBOX") == "1" or environ.get("CLAUDE_CODE_BUBBLEWRAP") == "1"


def refuses_root(environ: Mapping[str, str], *, uid: int | None = None) -> bool:
    """Whether Claude Code, started by claude-code-acp with ``environ`` as ``uid``
    (default: this process's effective user), will refuse to start.

    >>> refuses_root({"IS_SANDBOX": "true"}, uid=0), refuses_root({"IS_SANDBOX": "1"}, uid=0)
    (True, False)
    >>> refuses_root({}, uid=0), refuses_root({"IS_SANDBOX": "true"}, uid=1000)
    (False, False)
    """
    return _root(uid) and environ.get("IS_SANDBOX", "") != "" and not _sandboxed(environ)


def explain_root_refusal(
    message: str, environ: Mapping[str, str], *, uid: int | None = None
) -> str | None:
    """``message`` with the cause and the fix, when it says an agent's query closed early
    where Claude Code would refuse to run as root (``IS_SANDBOX`` not ``1``); else ``None``.

    >>> explain_root_refusal("session/new: Internal error: Query closed before response "
    ...     "received", {}, uid=0).endswith("or run as a user other than root)")
    True
    >>> explain_root_refusal("session/new: Internal error", {}, uid=0) is None
    True
    """
    if QUERY_CLOSED not in message or not _root(uid) or _sandboxed(environ):
        return None
    return f"{message} ({ROOT_REFUSAL}; fix: {ROOT_FIX})"
