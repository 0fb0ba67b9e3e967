"""Where an agent's saved session and its live ACP run differ, by design of each: the one
table the saved-vs-live tests (tests/e2e/agents/test_<agent>_saved_sessions.py, through
tests/kit/saved_sessions.py) hold every case to; docs/sessions.md links here.

``DIFFERENCES[agent][case]`` maps each field of the comparison that differs (``answer``,
``calls``: ids and kinds, ``finished``: how each call ended, ``files``: the files changed)
to why. Every other field of every case must agree, and a field listed here must differ
(a difference that goes away is a test failure: take it out of the table).
"""

from __future__ import annotations

__all__ = ("DIFFERENCES",)

_CANCEL = "the text streamed before the cancel is not saved"
_CODEX_READ = (
    "a command's kind: live, codex-acp parses the command (`cat a.txt`: read); the rollout "
    "keeps only the command (execute)"
)

DIFFERENCES: dict[str, dict[str, dict[str, str]]] = {
    "claude": {
        # A cancel ends the turn live; the session records only the prompt and the
        # interruption. (A denied call fails with the refusal in both.)
        "cancel": {"answer": _CANCEL},
    },
    "codex": {
        "edit": {"calls": _CODEX_READ},
        "tool_error": {
            "calls": _CODEX_READ + "; a patch that does not apply never becomes a call live, "
            "the rollout records the call",
            "finished": "the rollout's patch call fails (live: no call)",
        },
        "cancel": {"answer": _CANCEL},
    },
    # Qwen Code saves the text streamed before a cancel, and a denied call's refusal as the
    # live run reports it: nothing differs.
    "qwen": {},
    "gemini": {
        # tests/e2e/agents/test_gemini_cancel_saved.py: a turn cancelled between two others.
        "acp_cancel_rolled_back": {
            "answer": "Gemini CLI rolls a cancelled turn back (the file's $set of messages): "
            "the cancelled prompt and its streamed text are not saved, nor given to the model again"
        },
    },
    "opencode": {
        "write": {
            "files": "live, OpenCode's ACP agent reports a write without a diff (no "
            "file_changed); the database records the file written"
        },
    },
}
