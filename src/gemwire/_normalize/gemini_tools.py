"""What a Gemini CLI tool call is: its kind, a title, the files it touches, what it changed,
and what its recorded result says.

Kinds come from an exact allowlist: the ``Kind`` each built-in tool declares in Gemini CLI
0.61.0 (older names from 0.30.0 and 0.15.4 too), mapped the way Gemini's own ACP mode
maps them (``toAcpToolKind``: Agent -> think, Plan and Communicate -> other). Anything
else, MCP tools included, is ``other`` with its raw name kept.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Literal

import msgspec

from gemwire.events import FileChanged, Location, ToolCallStarted

__all__ = (
    "BUILTIN_TOOL_KINDS",
    "FILE_WRITERS",
    "ToolFacts",
    "derived_file_change",
    "describe_tool",
    "find_unified_diff",
    "first_line_asked",
    "function_responses",
    "recorded_result",
    "split_mcp_name",
    "tool_call_started",
)

BUILTIN_TOOL_KINDS: dict[str, str] = {
    "read_file": "read",
    "read_many_files": "read",
    "list_background_processes": "read",
    "read_background_output": "read",
    "read_mcp_resource": "read",
    "tracker_get_task": "read",
    "tracker_visualize": "read",
    "write_file": "edit",
    "replace": "edit",
    "tracker_create_task": "edit",
    "tracker_update_task": "edit",
    "tracker_add_dependency": "edit",
    "run_shell_command": "execute",
    "glob": "search",
    "grep_search": "search",
    "search_file_content": "search",  # grep_search before 0.2x
    "list_directory": "search",
    "google_web_search": "search",
    "list_mcp_resources": "search",
    "tracker_list_tasks": "search",
    "web_fetch": "fetch",
    "save_memory": "think",  # gone in 0.61.0
    "update_topic": "think",
    "get_internal_docs": "think",
    "invoke_agent": "think",  # Kind.Agent
    "codebase_investigator": "think",  # subagents exposed as tools (0.15, 0.30)
    "cli_help": "think",
    "write_todos": "other",
    "ask_user": "other",  # Kind.Communicate
    "enter_plan_mode": "other",  # Kind.Plan
    "exit_plan_mode": "other",
    "activate_skill": "other",
    "complete_task": "other",
}

# Parameter names that hold a path, newest first (read_file took absolute_path until 0.2x).
_PATH_PARAMS = ("file_path", "absolute_path", "dir_path", "path")
_PATH_KEYS = frozenset(_PATH_PARAMS)
_LINE_KEYS = frozenset(("start_line", "offset"))
# What to show as a title, per tool; other tools show their name.
_TITLE_PARAMS = {
    "run_shell_command": "command",
    "glob": "pattern",
    "grep_search": "pattern",
    "search_file_content": "pattern",
    "google_web_search": "query",
    "web_fetch": "prompt",
    "invoke_agent": "agent_name",
    "activate_skill": "name",
}
_TITLE_LIMIT = 200
# A built-in tool's kind and the parameter its title comes from, in one lookup.
_BUILTIN_TOOLS = {
    name: (kind, _TITLE_PARAMS.get(name)) for name, kind in BUILTIN_TOOL_KINDS.items()
}
FILE_WRITERS = frozenset({"write_file", "replace"})
"""The tools whose success changes a file."""


class ToolFacts(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    title: str
    locations: list[Location]
    mcp_server: str | None = None
    mcp_tool: str | None = None


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """``mcp_<server>_<tool>`` -> (server, tool).

    Gemini CLI joins server and tool with ``_`` and splits at the first ``_`` after
    ``mcp_`` itself, so a server name containing ``_`` is ambiguous upstream too.
    """
    if not name.startswith("mcp_"):
        return None
    server, sep, tool = name[len("mcp_") :].partition("_")
    if not (server and sep and tool):
        return None
    return server, tool


def _resolve(path: str, cwd: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path))


def _first_line(text: str) -> str:
    stripped = text.strip()
    shortened = stripped.partition("\n")[0][:_TITLE_LIMIT]
    return shortened if shortened == stripped else shortened + "…"


def first_line_asked(params: dict[str, Any]) -> int | None:
    """The 1-based line a call starts reading at: ``start_line``, or before 0.45 the
    0-based ``offset``."""
    line = params.get("start_line")
    if isinstance(line, int):
        return line
    offset = params.get("offset")
    return offset + 1 if isinstance(offset, int) else None


def describe_tool(name: str, params: dict[str, Any], cwd: str | None = None) -> ToolFacts:
    """Kind, title and locations of a call to ``name`` with the model's ``params``.

    Relative paths are resolved against ``cwd`` when it is known (as ACP reports them).
    """
    # Read off the event the hot path builds: one implementation of the rules.
    started = tool_call_started("", None, "", name, params, cwd)
    return ToolFacts(
        kind=started.kind,
        title=started.title,
        locations=started.locations,
        mcp_server=started.mcp_server,
        mcp_tool=started.mcp_tool,
    )


def tool_call_started(
    agent: str,
    session_id: str | None,
    call_id: str,
    name: str,
    params: dict[str, Any],
    cwd: str | None,
) -> ToolCallStarted:
    """The ``tool_call_started`` of a call to ``name`` with the model's ``params``
    (`describe_tool` says what it is)."""
    # Called for every tool call of every stream and session: plain lookups and no helper
    # calls on the common paths (each cost about as much as building the event).
    locations: list[Location] = []
    title = name
    if not _PATH_KEYS.isdisjoint(params):  # shell, search, web: no path, one C-level check
        for key in _PATH_PARAMS:
            path = params.get(key)
            if path and isinstance(path, str):
                # Most calls give no line: one C-level check spares them a call.
                line = None if _LINE_KEYS.isdisjoint(params) else first_line_asked(params)
                resolved = path if cwd is None or path[:1] == "/" else _resolve(path, cwd)
                locations.append(Location(path=resolved, line=line))
                title = path
                break
    known = _BUILTIN_TOOLS.get(name)
    if known is None:  # an MCP tool, or one this table does not know
        kind = "other"
        mcp_server, mcp_tool = split_mcp_name(name) or (None, None)
    else:
        kind, title_param = known
        mcp_server = mcp_tool = None
        if title_param is not None:
            value = params.get(title_param)
            if isinstance(value, str) and value and not value.isspace():
                title = _first_line(value)
    return ToolCallStarted(
        agent=agent,
        session_id=session_id,
        call_id=call_id,
        name=name,
        kind=kind,
        title=title,
        input=params,
        locations=locations,
        mcp_server=mcp_server,
        mcp_tool=mcp_tool,
    )


def derived_file_change(started: ToolCallStarted, session_id: str | None) -> FileChanged | None:
    """The ``file_changed`` a successful call implies, for the calls that change a file,
    when nothing recorded what it did (the live stream never does)."""
    if started.name not in FILE_WRITERS or not started.locations:
        return None
    change: Literal["created", "modified", "written"]
    if started.name == "write_file":
        change = "written"
    else:  # replace; with an empty old_string it creates the file (it fails if one exists)
        change = "created" if started.input.get("old_string") == "" else "modified"
    return FileChanged(
        agent=started.agent,
        session_id=session_id,
        path=started.locations[0].path,
        change=change,
        call_id=started.call_id,
        derived=True,
    )


def function_responses(content: Any) -> list[dict[str, Any]]:
    """The ``functionResponse`` parts of a message's ``content``: tool results sent back."""
    responses = []  # a loop, not a comprehension: this runs for every user message
    for part in content if isinstance(content, list) else (content,):
        if isinstance(part, dict) and isinstance(response := part.get("functionResponse"), dict):
            responses.append(response)  # noqa: PERF401
    return responses


def recorded_result(result: Any) -> tuple[str | None, str | None]:
    """(output, error) of a recorded tool ``result``: its first ``functionResponse`` with a
    ``response``, or a bare string (the output)."""
    if isinstance(result, str):
        return result, None
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict):
            output, error = body.get("output"), body.get("error")
            return (
                output if isinstance(output, str) else None,
                error if isinstance(error, str) else None,
            )
    return None, None


_DIFF_START = re.compile(r"^(Index: .*\n=+\n)?--- .*\n\+\+\+ .*\n@@ ", re.MULTILINE)


def find_unified_diff(text: str) -> str | None:
    """The unified diff inside a tool's output, if it holds one (from its header on)."""
    # Cheap scans first (a newline is a memchr away); most outputs hold no diff.
    if "\n" not in text or "\n@@ " not in text:
        return None
    match = _DIFF_START.search(text)
    return text[match.start() :] if match else None
