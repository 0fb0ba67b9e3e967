"""Saved Gemini session messages -> normalized events (the same vocabulary as a live run).

Pure and deterministic: `SessionNormalizer` takes a session's final messages, in order, and
yields what the live stream would have shown for them, plus what only the file keeps:
thoughts, each message's token usage, tool outputs, and the ``FileDiff`` of every edit
(``file_changed`` with ``derived=False``). Tool kinds come from the same allowlist as the
live stream (`describe_tool`). The mapping is documented row by row in docs/sessions.md.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET

from gemwire._normalize.gemini_tools import (
    derived_file_change,
    describe_tool,
    find_unified_diff,
    function_responses,
    recorded_result,
    tool_call_started,
)
from gemwire._normalize.notices import notice
from gemwire._normalize.open_calls import close_unreported
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    ModelUsage,
    SessionStarted,
    ThoughtDelta,
    TokenUsage,
    ToolCallFinished,
    ToolError,
    Unknown,
    UsageReported,
    UserMessage,
)
from gemwire.protocol.gemini_content import INJECTED_PREFIXES, content_string, text_of
from gemwire.protocol.gemini_messages import RawMessage, SessionMessage
from gemwire.wire.gemini_session import FileDiff, MessageRecord, ToolCallRecord

__all__ = ("SessionNormalizer", "file_diff_of", "thought_text")

_STATUS: dict[str, Literal["completed", "failed", "cancelled"]] = {
    "success": "completed",
    "error": "failed",
    "cancelled": "cancelled",
}
_SEVERITY: dict[str, Literal["info", "warning", "error"]] = {
    "info": "info",
    "warning": "warning",
    "error": "error",
}
# The tool-call error type is not recorded in session files (the live stream has it).
_UNRECORDED_ERROR_TYPE = "unknown"
# How Gemini CLI tells the model that the user rejected a call (docs/sessions.md).
_CANCELLED_BY_USER = "was canceled by the user."


def file_diff_of(call: ToolCallRecord) -> FileDiff | None:
    """The ``FileDiff`` an edit recorded as its ``resultDisplay``, if it has one."""
    display = call.resultDisplay
    if not (isinstance(display, dict) and "fileDiff" in display):
        return None
    try:
        return msgspec.convert(display, FileDiff)
    except msgspec.ValidationError:
        return None


def thought_text(subject: str, description: str) -> str:
    """A recorded thought as it streamed: Gemini split it at its bold first line."""
    return f"**{subject}**\n\n{description}" if subject else description


class SessionNormalizer:
    """Maps one saved session's messages to normalized events, in order.

    Args:
        session_id: the ``session_id`` of every event.
        cwd: the project root, to resolve the relative paths the model used.
        agent: the ``agent`` field of every event.
    """

    def __init__(
        self, *, session_id: str | None, cwd: str | None = None, agent: str = "gemini"
    ) -> None:
        self._sid = session_id
        self._cwd = cwd
        self._agent = agent
        # Calls seen only as functionCall parts (a history replay), waiting for a response.
        self._replayed: dict[str, str] = {}
        # The calls shown with their result: a response for one of these says nothing more
        # (Gemini records a result on its call, then again as a response; a replay again).
        self._shown: set[str] = set()
        # A session edits the same few files again and again: resolve each path once.
        self._changed_paths: dict[tuple[str, str], str] = {}

    def start(self) -> list[Event]:
        return [SessionStarted(agent=self._agent, session_id=self._sid, cwd=self._cwd)]

    def feed(self, message: SessionMessage) -> list[Event]:
        if isinstance(message, RawMessage):
            return [
                notice(self._agent, self._sid, f"message {message.id!r}: {message.reason}"),
                Unknown(
                    agent=self._agent,
                    session_id=self._sid,
                    upstream_type=message.type,
                    raw=message.raw,
                ),
            ]
        if message.type == "gemini":
            return self._gemini(message)
        if message.type == "user":
            return self._user(message)
        severity = _SEVERITY.get(message.type)
        text = content_string(message.content)
        if severity is None:
            return [
                Unknown(
                    agent=self._agent,
                    session_id=self._sid,
                    upstream_type=message.type,
                    raw=msgspec.json.encode(message).decode(),
                )
            ]
        if not text.strip():
            return []
        return [notice(self._agent, self._sid, text, severity=severity, source="upstream")]

    def finish(self) -> list[Event]:
        """Replayed calls that never got a response end as ``cancelled``, with a notice."""
        events: list[Event] = []
        for call_id, name in self._replayed.items():
            warning = f"{name} call {call_id!r} has no result"
            events += close_unreported(self._agent, self._sid, call_id, warning=warning)
        self._replayed.clear()
        return events

    def _user(self, message: MessageRecord) -> list[Event]:
        content = message.content
        responses = function_responses(content)
        if responses:
            # Tool results. Gemini 0.61 records them twice (here and on the call); a call with
            # no toolCalls entry takes its result from here: a replayed one, or one the user
            # rejected (ACP records no toolCalls entry for it, only this response).
            return [event for r in responses for event in self._response(r)]
        text = text_of(content if message.displayContent is UNSET else message.displayContent)
        shown = text.lstrip()
        if not shown or shown.startswith(INJECTED_PREFIXES):
            return []
        return [UserMessage(agent=self._agent, session_id=self._sid, text=text)]

    def _response(self, response: dict[str, Any]) -> list[Event]:
        call_id = response.get("id")
        if not isinstance(call_id, str):
            return []
        if call_id in self._replayed:
            del self._replayed[call_id]
            self._shown.add(call_id)
            return self._replayed_result(call_id, response)
        name = response.get("name")
        if call_id in self._shown or not isinstance(name, str):
            return []
        self._shown.add(call_id)
        return self._unrecorded_call(call_id, name, response)

    def _unrecorded_call(self, call_id: str, name: str, response: dict[str, Any]) -> list[Event]:
        """A call known only by its response: its arguments were never saved."""
        agent, sid = self._agent, self._sid
        output, error = recorded_result({"functionResponse": response})
        status: Literal["completed", "failed", "cancelled"] = "completed"
        if error is not None:
            status = "cancelled" if error.endswith(_CANCELLED_BY_USER) else "failed"
        return [
            tool_call_started(agent, sid, call_id, name, {}, self._cwd),
            ToolCallFinished(
                agent=agent,
                session_id=sid,
                call_id=call_id,
                status=status,
                output=output,
                error=None
                if error is None
                else ToolError(type=_UNRECORDED_ERROR_TYPE, message=error),
            ),
        ]

    def _replayed_result(self, call_id: str, response: dict[str, Any]) -> list[Event]:
        output, error = recorded_result({"functionResponse": response})
        return [
            ToolCallFinished(
                agent=self._agent,
                session_id=self._sid,
                call_id=call_id,
                status="failed" if error is not None else "completed",
                output=output if error is None else error,
                error=ToolError(type=_UNRECORDED_ERROR_TYPE, message=error)
                if error is not None
                else None,
                diff=find_unified_diff(output) if output else None,
            )
        ]

    def _gemini(self, message: MessageRecord) -> list[Event]:
        agent, sid = self._agent, self._sid
        thoughts = message.thoughts
        events: list[Event] = (
            [
                ThoughtDelta(
                    agent=agent, session_id=sid, text=thought_text(t.subject, t.description)
                )
                for t in thoughts
            ]
            if thoughts
            else []
        )
        content = message.content
        if isinstance(content, str):
            if content:
                events.append(MessageDelta(agent=agent, session_id=sid, text=content))
        elif isinstance(content, list):
            events.extend(self._parts(content))
        elif isinstance(content, dict):
            events.extend(self._parts([content]))
        for call in message.toolCalls or ():
            self._call(call, events)
        tokens = message.tokens
        if tokens:
            model_usage = ModelUsage(
                input_tokens=tokens.input,
                output_tokens=tokens.output,
                cached_tokens=tokens.cached,
                total_tokens=tokens.total,
            )
            by_model = {message.model: model_usage} if isinstance(message.model, str) else {}
            usage = TokenUsage(
                input_tokens=tokens.input,
                output_tokens=tokens.output,
                cached_tokens=tokens.cached,
                total_tokens=tokens.total,
                by_model=by_model,
            )
            events.append(UsageReported(agent=agent, session_id=sid, usage=usage))
        return events

    def _parts(self, parts: list[Any]) -> list[Event]:
        """A model message stored as Parts (after a resume replay or a compression)."""
        agent, sid = self._agent, self._sid
        events: list[Event] = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            text, call = part.get("text"), part.get("functionCall")
            if isinstance(text, str) and text:
                delta = ThoughtDelta if part.get("thought") else MessageDelta
                events.append(delta(agent=agent, session_id=sid, text=text))
            elif isinstance(call, dict) and isinstance(name := call.get("name"), str):
                args = call.get("args")
                args = args if isinstance(args, dict) else {}
                call_id = call.get("id")
                call_id = call_id if isinstance(call_id, str) else f"{name}-{len(self._replayed)}"
                self._replayed[call_id] = name
                events.append(tool_call_started(agent, sid, call_id, name, args, self._cwd))
        return events

    def _call(self, call: ToolCallRecord, events: list[Event]) -> None:
        """Append the events of one recorded tool call to ``events``."""
        agent, sid = self._agent, self._sid
        started = tool_call_started(agent, sid, call.id, call.name, call.args, self._cwd)
        events.append(started)
        self._shown.add(call.id)
        status = _STATUS.get(call.status)
        if status is None:
            events.append(notice(agent, sid, f"{call.name} call {call.id!r} ended {call.status!r}"))
            status = "cancelled"
        output, error = recorded_result(call.result)
        display = call.resultDisplay
        if isinstance(display, str) and display:
            output = display  # what the live stream shows as the output
        diff = file_diff_of(call)
        events.append(
            ToolCallFinished(
                agent=agent,
                session_id=sid,
                call_id=call.id,
                status=status,
                output=output,
                error=ToolError(type=_UNRECORDED_ERROR_TYPE, message=error)
                if status == "failed" and error is not None
                else None,
                diff=diff.fileDiff if diff else (find_unified_diff(output) if output else None),
            )
        )
        if status == "completed":
            changed = (
                self._recorded_change(call, diff)
                if diff is not None
                else derived_file_change(started, sid)  # no FileDiff (Gemini CLI before 0.2x)
            )
            if changed is not None:
                events.append(changed)

    def _recorded_change(self, call: ToolCallRecord, diff: FileDiff) -> FileChanged:
        """The change a recorded ``FileDiff`` says an edit made."""
        path = diff.filePath if isinstance(diff.filePath, str) else diff.fileName
        resolved = self._changed_paths.get((call.name, path))
        if resolved is None:
            facts = describe_tool(call.name, {"file_path": path}, self._cwd)
            resolved = self._changed_paths[call.name, path] = facts.locations[0].path
        return FileChanged(
            agent=self._agent,
            session_id=self._sid,
            path=resolved,
            change="created" if diff.isNewFile is True else "modified",
            call_id=call.id,
            derived=False,
        )
