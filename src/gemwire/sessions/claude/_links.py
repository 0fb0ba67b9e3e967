"""Where Claude Code keeps a session's subagents (``Task``), and which call ran each.

Claude Code 2.1.44 keeps a subagent's records in a file of its own beside its session's,
``<session>/subagents/agent-<agentId>.jsonl`` (every record ``isSidechain``, with the
``agentId``); the parent's ``tool_result`` of the ``Task`` call names the subagent
(``toolUseResult.agentId``). Files are enumerated and matched by name, never built from
what a record says.
"""

from __future__ import annotations

import os
from pathlib import Path

from gemwire.sessions._reading import session_entries
from gemwire.wire.claude_session import Message, Record

__all__ = ("subagent_calls", "subagent_folder", "subagent_paths")


def subagent_folder(session_file: str) -> Path:
    """Where the subagents of the session in ``session_file`` are kept.

    >>> subagent_folder("/p/1b3c.jsonl").as_posix()
    '/p/1b3c/subagents'
    """
    path = Path(session_file)
    return path.with_name(path.name.removesuffix(".jsonl")) / "subagents"


def subagent_paths(session_file: str) -> list[str]:
    """The subagent files of the session in ``session_file``, by name."""
    return [e.path for e in session_entries(str(subagent_folder(session_file)), (".jsonl",))]


def subagent_calls(session_file: str, records: list[Record]) -> dict[str, str]:
    """Each ``Task`` call of a session that ran a subagent whose file is kept -> that file."""
    kept = {os.path.basename(path): path for path in subagent_paths(session_file)}
    calls: dict[str, str] = {}
    for record in records:
        result, message = record.toolUseResult, record.message
        if not (isinstance(result, dict) and isinstance(message, Message)):
            continue
        path = kept.get(f"agent-{result.get('agentId')}.jsonl")
        if path is None or isinstance(message.content, str):
            continue
        for block in message.content:
            if block.type == "tool_result" and isinstance(block.tool_use_id, str):
                calls[block.tool_use_id] = path
    return calls
