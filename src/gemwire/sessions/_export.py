"""Exporting a loaded session: normalized events as JSONL, or Claude-style messages.

The Claude-compatible form is the ``UnifiedMessage`` of the 2025 agent-cli-sdk spec (seed
002): one object per message with ``role``, ``content`` blocks (``thinking``, ``text``,
``tool_use``, ``tool_result``), ``timestamp`` in epoch milliseconds, ``tool: "gemini"``,
``model``, ``usage`` and the message as recorded in ``_original`` (secret values masked,
as in every export: docs/security.md). Gemini tool names
and inputs become Claude's (``read_file`` -> ``Read`` ...), unknown tools keep theirs.

``usage`` carries the spec's camelCase keys (``inputTokens``, ``outputTokens``,
``cacheReadTokens``, ``totalTokens``) and the same numbers under Claude's snake_case names.

Two choices differ from that spec, both to keep what happened: blocks follow the order of
events (thinking, the text the model wrote, then each tool call and its result; the spec
put the text last), and ``info``/``warning``/``error`` messages are kept as ``system``
messages. Injected context and Gemini's duplicate tool-response messages are left out: their
content is in the ``tool_result`` blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import msgspec

from gemwire._normalize.gemini_tools import first_line_asked, function_responses, recorded_result
from gemwire.protocol.gemini_content import INJECTED_PREFIXES, content_string, text_of
from gemwire.protocol.gemini_messages import RawMessage, SessionMessage
from gemwire.sessions._transcript import export_masker
from gemwire.wire.gemini_session import MessageRecord, ToolCallRecord

__all__ = ("claude_tool", "to_unified_messages")

_CLAUDE_NAMES = {
    "read_file": "Read",
    "write_file": "Write",
    "replace": "Edit",
    "list_directory": "Glob",
    "glob": "Glob",
    "grep_search": "Grep",
    "search_file_content": "Grep",
    "run_shell_command": "Bash",
    "google_web_search": "WebSearch",
    "web_fetch": "WebFetch",
    "write_todos": "TodoWrite",
    "invoke_agent": "Task",
}


def _some(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def claude_tool(name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Claude's name and input for a Gemini tool call (unknown tools pass through)."""
    get = args.get
    match name:
        case "read_file":
            start, end = first_line_asked(args), get("end_line")
            limit = end - start + 1 if isinstance(start, int) and isinstance(end, int) else None
            return "Read", _some(
                file_path=get("file_path") or get("absolute_path"),
                offset=start,
                limit=limit if limit is not None else get("limit"),
            )
        case "write_file":
            return "Write", _some(file_path=get("file_path"), content=get("content"))
        case "replace":
            return "Edit", _some(
                file_path=get("file_path"),
                old_string=get("old_string"),
                new_string=get("new_string"),
                replace_all=get("allow_multiple"),
            )
        case "list_directory":
            return "Glob", _some(pattern="*", path=get("dir_path") or get("path"))
        case "glob":
            return "Glob", _some(pattern=get("pattern"), path=get("dir_path") or get("path"))
        case "grep_search" | "search_file_content":
            return "Grep", _some(
                pattern=get("pattern"),
                path=get("dir_path") or get("path"),
                glob=get("include_pattern") or get("include"),
            )
        case "run_shell_command":
            return "Bash", _some(command=get("command"), description=get("description"))
        case "write_todos":
            todos = get("todos")
            return "TodoWrite", {
                "todos": [
                    {"content": t.get("description"), "status": t.get("status")}
                    for t in (todos if isinstance(todos, list) else [])
                    if isinstance(t, dict)
                ]
            }
        case "invoke_agent":
            return "Task", _some(subagent_type=get("agent_name"), prompt=get("prompt"))
    return _CLAUDE_NAMES.get(name, name), args


def _millis(timestamp: str) -> int | None:
    try:
        return round(datetime.fromisoformat(timestamp).timestamp() * 1000)
    except ValueError:
        return None


def _result(call: ToolCallRecord) -> dict[str, Any]:
    output, error = recorded_result(call.result)
    return {
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": output if output is not None else error or "",
        "is_error": error is not None or call.status == "error",
    }


def _blocks(message: MessageRecord) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {
            "type": "thinking",
            "thinking": f"{t.subject}: {t.description}" if t.subject else t.description,
        }
        for t in message.thoughts or ()
    ]
    content = message.content
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str) and part.strip():
            blocks.append({"type": "text", "text": part})
        elif isinstance(part, dict) and isinstance(text := part.get("text"), str) and text:
            kind = "thinking" if part.get("thought") else "text"
            blocks.append({"type": kind, kind: text})
        elif isinstance(part, dict) and isinstance(call := part.get("functionCall"), dict):
            args = call.get("args")
            name, tool_input = claude_tool(
                str(call.get("name")), args if isinstance(args, dict) else {}
            )
            blocks.append(
                {"type": "tool_use", "id": call.get("id"), "name": name, "input": tool_input}
            )
    for tool_call in message.toolCalls or ():
        name, tool_input = claude_tool(tool_call.name, tool_call.args)
        blocks.append({"type": "tool_use", "id": tool_call.id, "name": name, "input": tool_input})
        if tool_call.result is not msgspec.UNSET and tool_call.result is not None:
            blocks.append(_result(tool_call))
    return blocks


def _unified(message: MessageRecord, original: Any) -> dict[str, Any] | None:
    if message.type == "user":
        if function_responses(message.content):
            return None  # the same results are on the calls, as tool_result blocks
        text = text_of(message.content)
        if text.lstrip().startswith(INJECTED_PREFIXES):
            return None
        role, blocks = "user", [{"type": "text", "text": text}]
    elif message.type == "gemini":
        role, blocks = "assistant", _blocks(message)
    else:
        role, blocks = "system", [{"type": "text", "text": content_string(message.content)}]
    unified: dict[str, Any] = {
        "id": message.id,
        "role": role,
        "content": blocks,
        "timestamp": _millis(message.timestamp),
        "tool": "gemini",
    }
    if isinstance(message.model, str):
        unified["model"] = message.model
    if message.tokens:
        tokens = message.tokens
        # Both spellings: agent-cli-sdk's UnifiedMessage types usage in camelCase, Claude's
        # own API in snake_case; a consumer typed to either finds its keys.
        unified["usage"] = {
            "inputTokens": tokens.input,
            "outputTokens": tokens.output,
            "cacheReadTokens": tokens.cached,
            "totalTokens": tokens.total,
            "input_tokens": tokens.input,
            "output_tokens": tokens.output,
            "cache_read_input_tokens": tokens.cached,
            "total_tokens": tokens.total,
        }
    unified["_original"] = original
    return unified


def to_unified_messages(
    messages: Iterable[SessionMessage],
    originals: list[Any] | None = None,
    *,
    secrets: Iterable[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Claude-compatible ``UnifiedMessage`` dicts for a session's messages, in order.

    ``originals`` are the messages as recorded (default: re-encoded from ``messages``);
    a message gemwire could not type is exported as recorded, under ``_original`` only.
    ``secrets`` are masked in every string, ``_original`` included (by default the secret
    values of this process's environment: docs/security.md).
    """
    masker = export_masker(secrets)
    for n, message in enumerate(messages):
        original = originals[n] if originals is not None else msgspec.to_builtins(message)
        if isinstance(message, RawMessage):
            unified: dict[str, Any] | None = {
                "id": message.id,
                "role": "system",
                "content": [],
                "tool": "gemini",
                "_original": msgspec.json.decode(message.raw),
            }
        else:
            unified = _unified(message, original)
        if unified is not None:
            yield masker.data(unified)
