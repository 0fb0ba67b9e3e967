"""Saved Codex session records (rollout files) -> normalized events (the vocabulary of a live run).

Pure and deterministic: `CodexSessionNormalizer` takes a rollout's records in order
(`gemwire.wire.codex_session`, payloads decoded by `gemwire.protocol.codex_session`) and
yields what they show. What the user saw comes from the ``event_msg`` records: the prompt
as typed (``user_message``, Codex 0.166's ``item_completed`` ``UserMessage``; the
``response_item`` user messages also hold Codex's own context), the reasoning summary and the
answer (``agent_reasoning`` / ``agent_message``, 0.166's ``Reasoning`` / ``AgentMessage``
items), an interrupted turn (a notice), and each model response's tokens: the difference
between consecutive cumulative totals (``token_count``'s, and 0.166's ``token_usage_record``'s
``thread_token_usage``; a repeated total adds nothing, so the two never count one response
twice). The tool calls come from the ``response_item`` records: each call started (its kind
from the exact allowlist of Codex's built-in tools, `CODEX_TOOL_KINDS`) and finished with
what the model was told; a ``file_changed`` for each file a patch changed, as
``patch_apply_end`` (0.166: a ``FileChange`` item) records it (``derived=False``).

What is read and what is skipped, record by record, is listed in docs/sessions.md.

A call's outcome is read from its output, as Codex words it: ``aborted by user…`` (a denied
permission, an interrupt) is ``cancelled``; a command that exited non-zero (``Process exited
with code N``, ``Exit code: N``) or a patch that did not apply (no successful
``patch_apply_end``) is ``failed``.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any, Literal

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
from gemwire.protocol.codex_session import Unreadable, payload_of
from gemwire.wire.codex_session import (
    EventMsg,
    FileChange,
    Record,
    ResponseItem,
    SessionMeta,
    ThreadItem,
    TokenUsage as CodexTokens,
    TokenUsageInfo,
    TokenUsageRecord,
    TurnContext,
)

__all__ = ("CODEX_TOOL_KINDS", "CodexSessionNormalizer", "tokens_spent")

CODEX_TOOL_KINDS: dict[str, ToolKind] = {
    "exec_command": "execute",
    "write_stdin": "execute",
    "shell": "execute",
    "shell_command": "execute",
    "local_shell": "execute",
    "apply_patch": "edit",
    "view_image": "read",
    "update_plan": "think",
    "request_user_input": "think",
    "tool_search": "search",
}
"""Codex 0.137.0's built-in tools (its ``core/src/tools/handlers``) and the ACP kind
codex-acp 0.16.0 gives the call each starts: a command ``execute`` (live, codex-acp parses
the command and may say ``read`` or ``search``; the rollout keeps only the command), a
patch ``edit``, an image ``read``, the plan and questions to the user ``think``. Any other
tool (the multi-agent and goal tools, MCP tools and resources, …) is ``other``."""

_CHANGES: dict[str, Literal["created", "modified", "deleted"]] = {
    "add": "created",
    "update": "modified",
    "delete": "deleted",
}
_ABORTED = "aborted by user"
_EXIT = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.MULTILINE)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_QUIET_EVENTS = frozenset({"task_started", "task_complete", "thread_settings_applied"})
"""Event types that say nothing a live run streams (``thread_settings_applied``: the
settings the next turns run with; each turn's ``turn_context`` says the model it ran)."""
_QUIET_RECORDS = frozenset({"world_state"})
"""Record types that say nothing a live run streams (the context Codex gives the model)."""
_QUIET_THREAD_ITEMS = frozenset({"CommandExecution"})
"""Items the ``response_item`` records already say (a command's call and its output)."""
_QUIET_ITEMS = frozenset({"message", "reasoning"})
"""Response items the ``event_msg`` records already say (as the user saw them)."""


class CodexSessionNormalizer:
    """Maps one saved Codex session's records to normalized events, in order.

    Args:
        session_id: the ``session_id`` of every event.
        cwd: the project folder the session ran in (a patch's relative paths are in it).
        agent: the ``agent`` field of every event.
    """

    def __init__(self, *, session_id: str | None, cwd: str | None, agent: str = "codex") -> None:
        self._sid = session_id
        self._cwd = cwd
        self._agent = agent
        self._model: str | None = None
        self._open: dict[str, ToolCallStarted] = {}
        self._patched: dict[str, dict[str, FileChange]] = {}
        self._counted = CodexTokens()

    def start(self) -> list[Event]:
        return [SessionStarted(agent=self._agent, session_id=self._sid, cwd=self._cwd)]

    def feed(self, record: Record) -> list[Event]:
        payload = payload_of(record)
        if isinstance(payload, EventMsg):
            return self._event(payload, record)
        if isinstance(payload, ResponseItem):
            return self._item(payload, record)
        if isinstance(payload, TurnContext):
            if isinstance(payload.model, str):
                self._model = payload.model
            return []
        if isinstance(payload, TokenUsageRecord):
            return self._usage(payload.thread_token_usage)
        if isinstance(payload, SessionMeta) or record.type in _QUIET_RECORDS:
            return []
        if isinstance(payload, Unreadable):
            return [notice(self._agent, self._sid, f"a {record.type} record: {payload.message}")]
        return [self._unknown(record.type, record)]

    def finish(self) -> list[Event]:
        """Calls that never got a result end ``cancelled``."""
        events: list[Event] = []
        for call_id, started in self._open.items():
            warning = f"{started.name} call {call_id!r} has no result"
            events += close_unreported(self._agent, self._sid, call_id, warning=warning)
        self._open.clear()
        return events

    def _unknown(self, upstream_type: str, record: Record) -> Unknown:
        raw = msgspec.json.encode(record).decode(errors="replace")
        return Unknown(
            agent=self._agent, session_id=self._sid, upstream_type=upstream_type, raw=raw
        )

    def _event(self, event: EventMsg, record: Record) -> list[Event]:
        agent, sid, text = self._agent, self._sid, event.message
        match event.type:
            case "user_message" if isinstance(text, str):
                return [UserMessage(agent=agent, session_id=sid, text=text)]
            case "agent_message" if isinstance(text, str) and text:
                return [MessageDelta(agent=agent, session_id=sid, text=text)]
            case "agent_reasoning" if isinstance(event.text, str) and event.text:
                return [ThoughtDelta(agent=agent, session_id=sid, text=event.text)]
            case "token_count" if isinstance(event.info, TokenUsageInfo):
                return self._usage(event.info.total_token_usage)
            case "token_count":
                return []
            case "item_completed" if isinstance(event.item, ThreadItem):
                return self._thread_item(event.item, record)
            case "patch_apply_end":
                if event.success is True and isinstance(event.call_id, str):
                    self._patched[event.call_id] = event.changes or {}
                return []
            case "turn_aborted":
                why = event.reason if isinstance(event.reason, str) else "aborted"
                return [notice(agent, sid, f"turn {why}", severity="info", source="upstream")]
            case kind if kind in _QUIET_EVENTS:
                return []
        return [self._unknown(f"event_msg/{event.type}", record)]

    def _thread_item(self, item: ThreadItem, record: Record) -> list[Event]:
        agent, sid = self._agent, self._sid
        content = item.content if isinstance(item.content, list) else []
        match item.type:
            case "UserMessage":
                text = "\n".join(c.text for c in content if isinstance(c.text, str))
                return [UserMessage(agent=agent, session_id=sid, text=text)]
            case "AgentMessage":
                text = "".join(c.text for c in content if isinstance(c.text, str))
                return [MessageDelta(agent=agent, session_id=sid, text=text)] if text else []
            case "Reasoning":
                summary = item.summary_text if isinstance(item.summary_text, list) else []
                text = "\n".join(summary)
                return [ThoughtDelta(agent=agent, session_id=sid, text=text)] if text else []
            case "FileChange":
                if item.status == "completed" and isinstance(item.id, str):
                    self._patched[item.id] = item.changes or {}
                return []
            case kind if kind in _QUIET_THREAD_ITEMS:
                return []
        return [self._unknown(f"event_msg/item_completed/{item.type}", record)]

    def _item(self, item: ResponseItem, record: Record) -> list[Event]:
        if item.type in ("function_call", "custom_tool_call", "local_shell_call"):
            return [self._started(item)]
        if item.type in ("function_call_output", "custom_tool_call_output"):
            return self._finished(item)
        if item.type in _QUIET_ITEMS:
            return []
        return [self._unknown(f"response_item/{item.type}", record)]

    def _started(self, item: ResponseItem) -> ToolCallStarted:
        name = item.name if isinstance(item.name, str) else item.type.removesuffix("_call")
        call_id = item.call_id if isinstance(item.call_id, str) else f"{name}-{len(self._open)}"
        arguments: dict[str, Any] = {}
        if isinstance(item.arguments, str):
            try:
                decoded = json.loads(item.arguments)
            except (ValueError, RecursionError):
                decoded = None
            arguments = decoded if isinstance(decoded, dict) else {"arguments": item.arguments}
        if isinstance(item.input, str):
            arguments = {"input": item.input}
        if isinstance(item.action, dict):
            arguments = item.action
        paths = [self._path(p) for p in _PATCH_FILE.findall(arguments.get("input", ""))]
        command = arguments.get("cmd", arguments.get("command"))
        if isinstance(command, list) and all(isinstance(c, str) for c in command):
            command = " ".join(command)
        title = command if isinstance(command, str) else " ".join([name, *paths])
        started = ToolCallStarted(
            agent=self._agent,
            session_id=self._sid,
            call_id=call_id,
            name=name,
            kind=CODEX_TOOL_KINDS.get(name, "other"),
            title=title,
            input=arguments,
            locations=[Location(path=p) for p in paths],
        )
        self._open[call_id] = started
        return started

    def _path(self, path: str) -> str:
        path = path.strip()
        return posixpath.join(self._cwd, path) if self._cwd is not None else path

    def _finished(self, item: ResponseItem) -> list[Event]:
        call_id = item.call_id if isinstance(item.call_id, str) else None
        started = self._open.pop(call_id, None) if call_id is not None else None
        if call_id is None or started is None:
            return [notice(self._agent, self._sid, f"a result for unknown call {call_id!r}")]
        output = item.output if isinstance(item.output, str) else None
        if output is None and item.output is not UNSET:
            output = msgspec.json.encode(item.output).decode(errors="replace")
        changes = self._patched.pop(call_id, None)
        status: Literal["completed", "failed", "cancelled"] = "completed"
        error = None
        if output is not None and output.startswith(_ABORTED):
            status, error = "cancelled", ToolError(type="cancelled", message=output)
        elif _failed(started.name, output, changes):
            status, error = "failed", ToolError(type="failed", message=output or "")
        events: list[Event] = [
            ToolCallFinished(
                agent=self._agent,
                session_id=self._sid,
                call_id=call_id,
                status=status,
                output=output,
                error=error,
            )
        ]
        for path, change in (changes or {}).items() if status == "completed" else ():
            events.append(
                FileChanged(
                    agent=self._agent,
                    session_id=self._sid,
                    path=path,
                    change=_CHANGES.get(change.type, "modified"),
                    call_id=call_id,
                    derived=False,
                )
            )
        return events

    def _usage(self, total: CodexTokens) -> list[Event]:
        """The tokens spent since the last cumulative ``total`` counted."""
        spent = tokens_spent(self._counted, total)
        self._counted = total
        if spent is None:
            return []
        tokens = ModelUsage(
            input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens,
            cached_tokens=spent.cached_input_tokens,
            total_tokens=spent.total_tokens,
        )
        return [
            UsageReported(
                agent=self._agent,
                session_id=self._sid,
                usage=TokenUsage(
                    input_tokens=tokens.input_tokens,
                    output_tokens=tokens.output_tokens,
                    cached_tokens=tokens.cached_tokens,
                    total_tokens=tokens.total_tokens,
                    by_model={self._model: tokens} if self._model is not None else {},
                ),
            )
        ]


def tokens_spent(before: CodexTokens, total: CodexTokens) -> CodexTokens | None:
    """What the responses between two cumulative ``token_count`` totals spent; ``None`` when
    nothing was (a repeated count, or a count that went down: a new tally).

    >>> tokens_spent(CodexTokens(input_tokens=100, total_tokens=110),
    ...              CodexTokens(input_tokens=300, output_tokens=30, total_tokens=330))
    TokenUsage(input_tokens=200, cached_input_tokens=0, cache_write_input_tokens=0, output_tokens=30, reasoning_output_tokens=0, total_tokens=220)
    >>> tokens_spent(CodexTokens(total_tokens=110), CodexTokens(total_tokens=110)) is None
    True
    """
    if total.total_tokens <= before.total_tokens:
        return None
    return CodexTokens(
        input_tokens=total.input_tokens - before.input_tokens,
        cached_input_tokens=total.cached_input_tokens - before.cached_input_tokens,
        cache_write_input_tokens=total.cache_write_input_tokens - before.cache_write_input_tokens,
        output_tokens=total.output_tokens - before.output_tokens,
        reasoning_output_tokens=total.reasoning_output_tokens - before.reasoning_output_tokens,
        total_tokens=total.total_tokens - before.total_tokens,
    )


def _failed(name: str, output: str | None, changes: dict[str, FileChange] | None) -> bool:
    if name == "apply_patch":
        return changes is None
    exit_code = _EXIT.search(output or "")
    return exit_code is not None and exit_code.group(1) != "0"
