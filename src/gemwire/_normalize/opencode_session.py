"""Saved OpenCode sessions (rows of its database) -> normalized events (the vocabulary of a
live run).

Pure and deterministic: `OpenCodeSessionNormalizer` takes a session's messages, each
followed by its parts, in order (`gemwire.wire.opencode_session`), and yields what they
show: the prompts (a user message's text parts OpenCode did not add itself), thoughts and
answer text, each tool call started (its kind from the exact allowlist of OpenCode's ACP
agent, `OPENCODE_TOOL_KINDS`) and finished as its state says (a call still pending or
running never finished: ``cancelled``), a ``file_changed`` for each file an ``edit`` or a
``write`` reports (``derived=False``: OpenCode records the file), each model response's
tokens once (after its parts), and a response that ended in an error as a notice.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

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
from gemwire.wire.opencode_session import MessageData, PartData, Tokens, ToolState

__all__ = ("OPENCODE_TOOL_KINDS", "OpenCodeSessionNormalizer", "response_tokens")

OPENCODE_TOOL_KINDS: dict[str, ToolKind] = {
    "bash": "execute",
    "shell": "execute",
    "webfetch": "fetch",
    "edit": "edit",
    "apply_patch": "edit",
    "patch": "edit",
    "write": "edit",
    "grep": "search",
    "glob": "search",
    "context": "search",
    "context7_resolve_library_id": "search",
    "context7_get_library_docs": "search",
    "read": "read",
    "task": "think",
}
"""The kind OpenCode 1.18.33's ACP agent gives each tool (its ``toToolKind``, by the
lower-cased name); any other tool (``list``, ``todowrite``, ``websearch``, MCP tools, …) is
``other``."""

_ABORTED = "MessageAbortedError"
_QUIET = frozenset({"step-start", "step-finish", "patch", "snapshot"})
"""Part types that say nothing a live run streams (the response's tokens are its
message's; a ``patch`` part names files from a snapshot, not the call that changed them)."""


def response_tokens(tokens: Tokens) -> ModelUsage:
    """A response's tokens as gemwire counts them: input with the cached and cache-written
    ones, output with the reasoning.

    >>> from gemwire.wire.opencode_session import TokenCache
    >>> response_tokens(Tokens(input=90, output=8, reasoning=2, cache=TokenCache(read=10)))
    ModelUsage(input_tokens=100, output_tokens=10, cached_tokens=10, total_tokens=110)
    """
    prompt = tokens.input + tokens.cache.read + tokens.cache.write
    output = tokens.output + tokens.reasoning
    return ModelUsage(
        input_tokens=prompt,
        output_tokens=output,
        cached_tokens=tokens.cache.read,
        total_tokens=prompt + output,
    )


class OpenCodeSessionNormalizer:
    """Maps one saved OpenCode session's messages and parts to normalized events, in order.

    Args:
        session_id: the ``session_id`` of every event.
        cwd: the project folder the session ran in.
        agent: the ``agent`` field of every event.
    """

    def __init__(self, *, session_id: str | None, cwd: str | None, agent: str = "opencode") -> None:
        self._sid = session_id
        self._cwd = cwd
        self._agent = agent
        self._role = ""
        self._response: MessageData | None = None  # its tokens follow its parts
        self._calls = 0

    def start(self) -> list[Event]:
        return [SessionStarted(agent=self._agent, session_id=self._sid, cwd=self._cwd)]

    def feed(self, record: MessageData | PartData) -> list[Event]:
        if isinstance(record, MessageData):
            events = self._end_response()
            self._role = record.role
            if record.role == "assistant":
                self._response = record
            return events
        return self._part(record)

    def finish(self) -> list[Event]:
        return self._end_response()

    def _end_response(self) -> list[Event]:
        response, self._response = self._response, None
        if response is None:
            return []
        events: list[Event] = []
        if isinstance(response.tokens, Tokens):
            tokens = response_tokens(response.tokens)
            model = response.modelID
            usage = TokenUsage(
                input_tokens=tokens.input_tokens,
                output_tokens=tokens.output_tokens,
                cached_tokens=tokens.cached_tokens,
                total_tokens=tokens.total_tokens,
                by_model={model: tokens} if isinstance(model, str) else {},
            )
            if usage.total_tokens:
                events.append(UsageReported(agent=self._agent, session_id=self._sid, usage=usage))
        error = response.error
        if isinstance(error, dict):
            name = error.get("name")
            data = error.get("data")
            why = data.get("message") if isinstance(data, dict) else None
            text = f"{name}: {why}" if isinstance(why, str) and why else str(name)
            aborted = name == _ABORTED
            events.append(
                notice(
                    self._agent,
                    self._sid,
                    "turn aborted" if aborted else text,
                    severity="info" if aborted else "warning",
                    source="upstream",
                )
            )
        return events

    def _part(self, part: PartData) -> list[Event]:
        agent, sid, text = self._agent, self._sid, part.text
        if part.type == "text" and isinstance(text, str):
            if self._role == "user":
                return (
                    []
                    if part.synthetic is True
                    else [UserMessage(agent=agent, session_id=sid, text=text)]
                )
            return [MessageDelta(agent=agent, session_id=sid, text=text)] if text else []
        if part.type == "reasoning" and isinstance(text, str):
            return [ThoughtDelta(agent=agent, session_id=sid, text=text)] if text else []
        if part.type == "tool" and isinstance(part.tool, str) and isinstance(part.state, ToolState):
            return self._tool(part.tool, part.callID, part.state)
        if part.type in _QUIET:
            return []
        raw = msgspec.json.encode(part).decode(errors="replace")
        return [Unknown(agent=agent, session_id=sid, upstream_type=f"part/{part.type}", raw=raw)]

    def _tool(self, name: Any, call: Any, state: ToolState) -> list[Event]:
        agent, sid = self._agent, self._sid
        self._calls += 1
        call_id = call if isinstance(call, str) else f"{name}-{self._calls}"
        path = state.input.get("filePath")
        title = state.title if isinstance(state.title, str) and state.title else name
        events: list[Event] = [
            ToolCallStarted(
                agent=agent,
                session_id=sid,
                call_id=call_id,
                name=name,
                kind=OPENCODE_TOOL_KINDS.get(name.lower(), "other"),
                title=title,
                input=state.input,
                locations=[Location(path=path)] if isinstance(path, str) else [],
            )
        ]
        if state.status == "completed":
            output = state.output if isinstance(state.output, str) else None
            events.append(
                ToolCallFinished(
                    agent=agent, session_id=sid, call_id=call_id, status="completed", output=output
                )
            )
            events += self._changed(name, call_id, state.metadata)
        elif state.status == "error":
            error = state.error if isinstance(state.error, str) else ""
            events.append(
                ToolCallFinished(
                    agent=agent,
                    session_id=sid,
                    call_id=call_id,
                    status="failed",
                    output=error,
                    error=ToolError(type="failed", message=error),
                )
            )
        else:
            warning = f"{name} call {call_id!r} never finished ({state.status})"
            events += close_unreported(agent, sid, call_id, warning=warning)
        return events

    def _changed(self, name: str, call_id: str, metadata: Any) -> list[Event]:
        if not isinstance(metadata, dict):
            return []
        change: Literal["created", "modified", "written"]
        if name == "edit" and isinstance(diff := metadata.get("filediff"), dict):
            path, change = diff.get("file"), "modified"
        elif name == "write":
            path = metadata.get("filepath")
            change = "written" if metadata.get("exists") is not False else "created"
        else:
            return []
        if not isinstance(path, str):
            return []
        return [
            FileChanged(
                agent=self._agent,
                session_id=self._sid,
                path=path,
                change=change,
                call_id=call_id,
                derived=False,
            )
        ]
