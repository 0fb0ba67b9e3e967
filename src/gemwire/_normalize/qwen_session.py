"""Saved Qwen Code session records -> normalized events (the vocabulary of a live run).

Pure and deterministic: `QwenSessionNormalizer` takes a session file's records in order
(`gemwire.wire.qwen_session`) and yields what they show: the prompts, thoughts and answer
text, each tool call started (its kind from the exact allowlist of Qwen Code's built-in
tools, `QWEN_TOOL_KINDS`) and finished with its result, a ``file_changed`` for each edit
whose result shows the file's diff (``derived=False``: Qwen Code records the change), and
each model response's tokens. A user-role record Qwen Code wrote itself (a notification, a
cron prompt) is a ``notice``, not a prompt. ``system`` records (telemetry, file backups, checkpoints) say
nothing a live run streams and are skipped; a record of an unknown type is ``unknown``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from gemwire._normalize.notices import notice
from gemwire._normalize.open_calls import close_unreported
from gemwire.events import (
    Event,
    FileChanged,
    Location,
    MessageDelta,
    ModelUsage,
    SessionStarted,
    ThoughtDelta,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolError,
    ToolKind,
    Unknown,
    UsageReported,
    UserMessage,
)
from gemwire.wire.qwen_session import (
    Content,
    FileDiff,
    FunctionCall,
    FunctionResponse,
    Record,
    ToolCallResult,
    UsageMetadata,
)

__all__ = ("QWEN_TOOL_KINDS", "QwenSessionNormalizer")

QWEN_TOOL_KINDS: dict[str, ToolKind] = {
    "edit": "edit",
    "write_file": "edit",
    "notebook_edit": "edit",
    "read_file": "read",
    "zoom_image": "read",
    "skill": "read",
    "list_agents": "read",
    "task_list": "read",
    "grep_search": "search",
    "glob": "search",
    "list_directory": "search",
    "web_search": "search",
    "run_shell_command": "execute",
    "monitor": "execute",
    "image_gen": "execute",
    "web_fetch": "fetch",
    "read_mcp_resource": "fetch",
    "todo_write": "think",
    "ask_user_question": "think",
    "team_plan_approval": "think",
    "structured_output": "think",
    "team_delete": "delete",
    "exit_plan_mode": "switch_mode",
    "enter_plan_mode": "switch_mode",
}
"""Qwen Code 0.24.4's built-in tools (``ToolNames``) and the ACP kind its ACP agent gives
each (the tool's ``Kind`` through ``KIND_MAP``; the plan-mode tools ``switch_mode``); any
other tool (``agent``, ``cron_create``, ``task_create``, MCP tools, …) is ``other``."""

_PATH_FIELDS = ("file_path", "notebook_path", "absolute_path", "path")
_REAL_USER = "real_user"
"""The ``provenance`` of what the user typed (Qwen Code's own user-role records have
another)."""
_QUIET = frozenset({"system"})
"""Record types that say nothing a live run streams."""


def _file_diff(result: ToolCallResult) -> FileDiff | None:
    display = result.resultDisplay
    if not (isinstance(display, dict) and "fileDiff" in display):
        return None
    try:
        return msgspec.convert(display, FileDiff)
    except msgspec.ValidationError:
        return None


class QwenSessionNormalizer:
    """Maps one saved Qwen Code session's records to normalized events, in order.

    Args:
        session_id: the ``session_id`` of every event.
        cwd: the project folder the session ran in.
        agent: the ``agent`` field of every event.
    """

    def __init__(self, *, session_id: str | None, cwd: str | None, agent: str = "qwen") -> None:
        self._sid = session_id
        self._cwd = cwd
        self._agent = agent
        self._open: dict[str, ToolCallStarted] = {}

    def start(self) -> list[Event]:
        return [SessionStarted(agent=self._agent, session_id=self._sid, cwd=self._cwd)]

    def feed(self, record: Record) -> list[Event]:
        message = record.message
        if record.type == "assistant":
            events = self._assistant(message) if isinstance(message, Content) else []
            if isinstance(record.usageMetadata, UsageMetadata):
                events.append(self._usage(record.usageMetadata, record.model))
            return events
        if record.type == "user" and isinstance(message, Content):
            if record.provenance in (UNSET, _REAL_USER):
                return self._user(message)
            return self._not_typed(message, record)
        if record.type == "tool_result" and isinstance(message, Content):
            result = record.toolCallResult
            return self._results(message, result if isinstance(result, ToolCallResult) else None)
        if record.type in _QUIET:
            return []
        raw = msgspec.json.encode(record).decode()
        return [
            Unknown(agent=self._agent, session_id=self._sid, upstream_type=record.type, raw=raw)
        ]

    def finish(self) -> list[Event]:
        """Calls that never got a result end ``cancelled``."""
        events: list[Event] = []
        for call_id, started in self._open.items():
            warning = f"{started.name} call {call_id!r} has no result"
            events += close_unreported(self._agent, self._sid, call_id, warning=warning)
        self._open.clear()
        return events

    def _assistant(self, message: Content) -> list[Event]:
        agent, sid = self._agent, self._sid
        events: list[Event] = []
        for part in message.parts:
            if isinstance(part.functionCall, FunctionCall):
                events.append(self._started(part.functionCall))
            elif isinstance(part.text, str) and part.text:
                if part.thought is True:
                    events.append(ThoughtDelta(agent=agent, session_id=sid, text=part.text))
                else:
                    events.append(MessageDelta(agent=agent, session_id=sid, text=part.text))
        return events

    def _started(self, call: FunctionCall) -> ToolCallStarted:
        call_id = call.id if isinstance(call.id, str) else f"{call.name}-{len(self._open)}"
        arguments = call.args
        path = next((p for f in _PATH_FIELDS if isinstance(p := arguments.get(f), str)), None)
        command = arguments.get("command")
        title = (
            command
            if isinstance(command, str)
            else f"{call.name} {path}"
            if path is not None
            else call.name
        )
        started = ToolCallStarted(
            agent=self._agent,
            session_id=self._sid,
            call_id=call_id,
            name=call.name,
            kind=QWEN_TOOL_KINDS.get(call.name, "other"),
            title=title,
            input=arguments,
            locations=[Location(path=path)] if path is not None else [],
        )
        self._open[call_id] = started
        return started

    def _user(self, message: Content) -> list[Event]:
        return [
            UserMessage(agent=self._agent, session_id=self._sid, text=part.text)
            for part in message.parts
            if isinstance(part.text, str) and part.text.strip() and part.thought is not True
        ]

    def _not_typed(self, message: Content, record: Record) -> list[Event]:
        """A user-role record Qwen Code wrote itself (a notification, a cron prompt, a goal's
        runtime message): not the user's words, so a notice."""
        kind = record.subtype if isinstance(record.subtype, str) else record.provenance
        return [
            notice(
                self._agent, self._sid, f"{kind}: {part.text}", severity="info", source="upstream"
            )
            for part in message.parts
            if isinstance(part.text, str) and part.text.strip()
        ]

    def _results(self, message: Content, result: ToolCallResult | None) -> list[Event]:
        events: list[Event] = []
        for part in message.parts:
            response = part.functionResponse
            if isinstance(response, FunctionResponse):
                events += self._finished(response, result)
        return events

    def _finished(self, response: FunctionResponse, result: ToolCallResult | None) -> list[Event]:
        call_id = response.id if isinstance(response.id, str) else None
        started = self._open.pop(call_id, None) if call_id is not None else None
        if call_id is None or started is None:
            return [notice(self._agent, self._sid, f"a result for unknown call {call_id!r}")]
        error = response.response.get("error")
        output = response.response.get("output")
        status = result.status if result is not None else None
        failed = isinstance(error, str) or status in ("error", "cancelled")
        text = error if isinstance(error, str) else output if isinstance(output, str) else None
        events: list[Event] = [
            ToolCallFinished(
                agent=self._agent,
                session_id=self._sid,
                call_id=call_id,
                status="failed" if failed else "completed",
                output=text,
                error=ToolError(type=_error_type(result), message=text or "") if failed else None,
            )
        ]
        diff = _file_diff(result) if result is not None and not failed else None
        if diff is not None:
            path = diff.filePath if isinstance(diff.filePath, str) else diff.fileName
            events.append(
                FileChanged(
                    agent=self._agent,
                    session_id=self._sid,
                    path=path,
                    change="created" if diff.isNewFile is True else "modified",
                    call_id=call_id,
                    derived=False,
                )
            )
        return events

    def _usage(self, usage: UsageMetadata, model: Any) -> UsageReported:
        tokens = ModelUsage(
            input_tokens=usage.promptTokenCount,
            output_tokens=usage.candidatesTokenCount,
            cached_tokens=usage.cachedContentTokenCount,
            total_tokens=usage.totalTokenCount,
        )
        return UsageReported(
            agent=self._agent,
            session_id=self._sid,
            usage=TokenUsage(
                input_tokens=usage.promptTokenCount,
                output_tokens=usage.candidatesTokenCount,
                cached_tokens=usage.cachedContentTokenCount,
                total_tokens=usage.totalTokenCount,
                by_model={model: tokens} if isinstance(model, str) else {},
            ),
        )


def _error_type(result: ToolCallResult | None) -> str:
    if result is not None and result.status == "cancelled":
        return "cancelled"
    if result is not None and isinstance(result.errorType, str):
        return result.errorType
    return "unknown"
