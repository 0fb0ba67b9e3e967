"""Antigravity's tool calls as ACP tool calls: one ``toolCallId`` for every stage of a call.

The harness shows one call three times, under different names and ids: the policy asks
about it first (the SDK's name, ``create_file`` for the model's ``write_to_file``, the
model's arguments, no id); then it runs as a step (``edit_file``, only ``file_path``, the
step's id); then the step is done (its result in ``args``). `ToolCalls` gives each call one
id from the first stage it is seen at and matches the later ones to it, by kind of tool and
target (the file, the command line), in the order asked. Sans-IO: `wire.antigravity` steps
and plain arguments in, ACP updates (``session/update`` ``update`` objects) out.

    >>> calls = ToolCalls()
    >>> asked = calls.asked("run_command", {"CommandLine": "ls", "Cwd": "/w"})
    >>> asked.tool_call_id, asked.kind, asked.title
    ('call-1', 'execute', 'ls')
    >>> from gemwire.wire.antigravity import Step, ToolCall
    >>> call = ToolCall(name="run_command", args={"command_line": "ls"}, id="t:2")
    >>> [u["status"] for u in calls.step(Step(id="t:2", type="TOOL_CALL", status="ACTIVE",
    ...                                          tool_calls=[call]))]
    ['in_progress']
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import msgspec

from gemwire.wire import acp
from gemwire.wire.antigravity import Step, ToolCall

__all__ = ("TOOL_KINDS", "ToolCalls", "denied_update", "tool_kind")

TOOL_KINDS: dict[str, str] = {
    "create_file": "edit",
    "edit_file": "edit",
    "view_file": "read",
    "list_directory": "read",
    "search_directory": "search",
    "find_file": "search",
    "run_command": "execute",
    "search_web": "fetch",
    "read_url_content": "fetch",
}
"""The ACP kind of each built-in tool, by the SDK's name; the rest are ``other``."""

_SAME_TOOL = {"create_file": "edit_file"}
"""The name a call asked about under runs as (the SDK folds writes into ``edit_file``)."""

_PATH_ARGS = ("file_path", "TargetFile", "AbsolutePath", "DirectoryPath", "SearchPath")
_COMMAND_ARGS = ("command_line", "CommandLine")


def tool_kind(name: str) -> str:
    return TOOL_KINDS.get(name, "other")


def _first(args: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = args.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _target(name: str, args: Mapping[str, Any], canonical: str | None = None) -> str | None:
    """What a call acts on, the same at every stage: its file, else its command line."""
    if tool_kind(name) == "execute":
        return _first(args, _COMMAND_ARGS)
    return canonical or _first(args, _PATH_ARGS)


def _title(name: str, args: Mapping[str, Any], path: str | None) -> str:
    command = _first(args, _COMMAND_ARGS)
    if command is not None:
        return command
    verbs = {"create_file": "Write", "edit_file": "Edit", "view_file": "Read"}
    if path is not None:
        return f"{verbs.get(name, name)} {path}"
    for key in ("Query", "query", "Url", "url", "Pattern"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"{name}: {value}"
    return name


def _asked_content(name: str, args: Mapping[str, Any], path: str | None) -> list[Any] | None:
    """What a write or an edit will change, from the model's arguments."""
    if path is None:
        return None
    if name == "create_file" and isinstance(args.get("CodeContent"), str):
        return [acp.Diff(path=path, old_text=None, new_text=args["CodeContent"])]
    if name != "edit_file":
        return None
    pairs = [(args.get("TargetContent"), args.get("ReplacementContent"))]
    chunks = args.get("ReplacementChunks")
    if isinstance(chunks, list):
        pairs = [
            (chunk.get("TargetContent"), chunk.get("ReplacementContent"))
            for chunk in chunks
            if isinstance(chunk, dict)
        ]
    diffs = [
        acp.Diff(path=path, old_text=old, new_text=new)
        for old, new in pairs
        if isinstance(old, str) and isinstance(new, str)
    ]
    return diffs or None


def _hunk_diffs(path: str, blocks: Any) -> list[Any]:
    """A done edit's ``diff_block`` hunks, each as the lines it replaced and its new lines."""
    diffs: list[Any] = []
    for block in blocks if isinstance(blocks, list) else ():
        lines = block.get("lines") if isinstance(block, dict) else None
        if not isinstance(lines, list):
            continue
        old: list[str] = []
        new: list[str] = []
        for line in lines:
            if not isinstance(line, dict):
                continue
            text = str(line.get("text", ""))
            action = line.get("action")
            if action != "LINE_ACTION_INSERT":
                old.append(text)
            if action != "LINE_ACTION_DELETE":
                new.append(text)
        created = not old and bool(new)
        diffs.append(
            acp.Diff(
                path=path, old_text=None if created else "\n".join(old), new_text="\n".join(new)
            )
        )
    return diffs


def _text(text: str) -> acp.Content:
    return acp.Content(content=acp.TextContent(text=text))


def _result_content(call: ToolCall, path: str | None) -> list[Any] | None:
    args = call.args
    if path is not None and "diff_block" in args:
        return _hunk_diffs(path, args["diff_block"]) or None
    output = args.get("combined_output")
    if isinstance(output, str) and output:
        return [_text(output)]
    return None


class _Call(msgspec.Struct, kw_only=True):
    tool_call_id: str
    name: str
    target: str | None
    step_id: str | None = None


class ToolCalls:
    """One session's tool calls, by the id the client knows them under."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._approved: list[_Call] = []
        """Asked and allowed, not yet seen as a step: matched in order."""
        self._by_step: dict[str, _Call] = {}

    def asked(self, name: str, args: Mapping[str, Any]) -> acp.ToolCall:
        """A call the policy asks about: the ``tool_call`` to announce it with (pending)."""
        path = _target(name, args) if tool_kind(name) != "execute" else None
        call = _Call(
            tool_call_id=f"call-{next(self._ids)}",
            name=_SAME_TOOL.get(name, name),
            target=_target(name, args),
        )
        self._approved.append(call)
        return acp.ToolCall(
            tool_call_id=call.tool_call_id,
            title=_title(name, args, path),
            name=name,
            kind=tool_kind(name),
            status="pending",
            content=_asked_content(name, args, path),
            locations=[acp.ToolCallLocation(path=path)] if path else None,
            raw_input=dict(args),
        )

    def denied(self, tool_call_id: str) -> None:
        """The asked call will never run."""
        self._approved = [call for call in self._approved if call.tool_call_id != tool_call_id]

    def step(self, step: Step) -> list[dict[str, Any]]:
        """The ``tool_call`` and ``tool_call_update`` updates a ``TOOL_CALL`` step makes."""
        if step.type != "TOOL_CALL":
            return []
        updates: list[dict[str, Any]] = []
        for call in step.tool_calls:
            updates += self._stage(step, call)
        return updates

    def _stage(self, step: Step, call: ToolCall) -> list[dict[str, Any]]:
        key = call.id or step.id
        path = call.canonical_path or _first(call.args, _PATH_ARGS)
        known = self._by_step.get(key)
        updates: list[dict[str, Any]] = []
        if known is None:
            known = self._match(call, key)
            if known is None:
                known = _Call(tool_call_id=key, name=call.name, target=None, step_id=key)
                self._by_step[key] = known
                updates.append(
                    _update(
                        "tool_call",
                        acp.ToolCall(
                            tool_call_id=key,
                            title=_title(call.name, call.args, path),
                            name=call.name,
                            kind=tool_kind(call.name),
                            status="in_progress",
                            locations=[acp.ToolCallLocation(path=path)] if path else None,
                            raw_input=dict(call.args),
                        ),
                    )
                )
            else:
                updates.append(
                    _update(
                        "tool_call_update",
                        acp.ToolCallUpdate(tool_call_id=known.tool_call_id, status="in_progress"),
                    )
                )
        status = {"DONE": "completed", "ERROR": "failed", "CANCELED": "failed"}.get(step.status)
        if status is not None:
            del self._by_step[key]
            content = _result_content(call, path)
            if step.error:
                content = [*(content or []), _text(step.error)]
            updates.append(
                _update(
                    "tool_call_update",
                    acp.ToolCallUpdate(
                        tool_call_id=known.tool_call_id,
                        status=status,
                        content=content,
                        raw_output=dict(call.args),
                    ),
                )
            )
        return updates

    def _match(self, call: ToolCall, key: str) -> _Call | None:
        target = _target(call.name, call.args, call.canonical_path)
        for index, approved in enumerate(self._approved):
            if approved.name == call.name and approved.target in (None, target):
                del self._approved[index]
                approved.step_id = key
                self._by_step[key] = approved
                return approved
        return None


def denied_update(tool_call_id: str, message: str) -> dict[str, Any]:
    """The update that ends an asked call the user (or the mode) denied."""
    return _update(
        "tool_call_update",
        acp.ToolCallUpdate(tool_call_id=tool_call_id, status="failed", content=[_text(message)]),
    )


def _update(kind: str, payload: acp.ToolCall | acp.ToolCallUpdate) -> dict[str, Any]:
    return {"sessionUpdate": kind, **msgspec.to_builtins(payload)}
