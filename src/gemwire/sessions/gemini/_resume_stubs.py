"""Keep a resumed session safe from Gemini's own retention cleanup
(docs/gemini-cli.md#session-cleanup).

Resuming a session in a later minute than its file's name makes Gemini CLI write a stub
``session-<this minute>-<short id>.jsonl`` holding only a header and the injected context.
The stub is not resumable, and at every start the CLI's cleanup (on by default) deletes
each file that is not resumable *together with every file sharing its short id*: the next
run in the project, or any run starting alongside, deletes the resumed session. Turning
the cleanup off would mean editing the user's settings, so gemwire removes the stubs
instead, and only those: files of this session that Gemini itself would not resume, while
a resumable file of the same session exists.

Both runners call `remove_resume_stubs` after a run that resumed a session: the one place a
run changes session files, so the rules about them stay here, beside the code that reads them.
"""

from __future__ import annotations

import contextlib
import os

from gemwire.sessions.gemini._home import GeminiHome

__all__ = ("remove_resume_stubs",)


def remove_resume_stubs(home: str, project_root: str, session_id: str) -> list[str]:
    """Delete the stub files a resume of ``session_id`` left; returns their paths."""
    files = GeminiHome(home).files_of(session_id, project_root)
    if not any(f.resumable and f.id == session_id for f in files):
        return []  # a new session's own file is not resumable yet: never touch it
    removed = []
    for info in files:
        # A FIFO or a device named like a stub is no file Gemini wrote: never ours to remove.
        if not info.resumable and info.id in (session_id, None) and os.path.isfile(info.path):
            with contextlib.suppress(FileNotFoundError):  # the CLI's cleanup may be faster
                os.unlink(info.path)
            removed.append(info.path)
    return removed
