"""Saved Claude Code session records -> normalized events (the vocabulary of a live run).

Pure and deterministic: `ClaudeSessionNormalizer` takes a session file's records in order
(`gemwire.wire.claude_session`) and yields what they show: the prompts, thoughts and answer
text, each tool call started (its kind from the exact allowlist of Claude's built-in tools,
`CLAUDE_TOOL_KINDS`) and finished with its result, a ``file_changed`` for each file tool
that succeeded (``derived=True``: the record keeps the tool's input and a text result, not a
structured change), and each model response's tokens once. A subagent's (``Task``) file,
every record a sidechain, is normalized as its own session (``subagent``); sidechain records in
a main session's file are left out, with one notice saying how many.

Claude Code 2.1.318's own record types: ``cost-state`` (the session's cost so far) is a
``session_updated`` ``usage_update`` with its ``cost`` in USD, and ``permission-mode`` a
``current_mode_update``, as claude-agent-acp sends them live; the rest (`SKIPPED`) say
nothing a live run streams. docs/sessions.md lists them, and why.
"""

from __future__ import annotations

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
    SessionUpdated,
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
from gemwire.wire.claude_session import ContentBlock, Message, Record, Usage

__all__ = ("CLAUDE_TOOL_KINDS", "SKIPPED", "ClaudeSessionNormalizer")

CLAUDE_TOOL_KINDS: dict[str, ToolKind] = {
    "Task": "think",
    "NotebookRead": "read",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "BashOutput": "execute",
    "KillShell": "execute",
    "Read": "read",
    "LS": "search",
    "Edit": "edit",
    "Write": "edit",
    "Glob": "search",
    "Grep": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "TodoWrite": "think",
    "ExitPlanMode": "switch_mode",
    # claude-code-acp's own tools, which replace Read, Edit, Write and Bash when the client
    # offers files and terminals.
    "mcp__acp__Read": "read",
    "mcp__acp__Edit": "edit",
    "mcp__acp__Write": "edit",
    "mcp__acp__Bash": "execute",
    "mcp__acp__BashOutput": "execute",
    "mcp__acp__KillShell": "execute",
}
"""Claude's built-in tools and the ACP kind claude-code-acp 0.16.2 gives each
(``toolInfoFromToolUse``); any other tool is ``other``."""

_PATH_FIELDS = ("file_path", "notebook_path")
_CHANGES: dict[str, Literal["modified", "written"]] = {
    "Edit": "modified",
    "NotebookEdit": "modified",
    "mcp__acp__Edit": "modified",
    "Write": "written",
    "mcp__acp__Write": "written",
}
_INTERRUPTED = "[Request interrupted by user"
SKIPPED = frozenset(
    {
        "queue-operation",
        # Claude Code 2.1.318
        "attachment",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "last-prompt",
        "tools-used",
        "mode",
    }
)
"""Record types that say nothing about the conversation: a prompt queued, what was sent to
the model (the context Claude Code attaches, each request), Claude Code's own bookkeeping
(the latest prompt, the tools used, its session mode: ``coordinator`` or ``normal``,
not the ACP mode, which ``permission-mode`` is)."""


def _text(content: Any) -> str:
    """The text of a ``tool_result``'s content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block.get("text", "") if isinstance(block, dict) else getattr(block, "text", "")
            for block in content
            if (block.get("type") if isinstance(block, dict) else getattr(block, "type", ""))
            == "text"
        )
    return ""


class ClaudeSessionNormalizer:
    """Maps one saved Claude Code session's records to normalized events, in order.

    Args:
        session_id: the ``session_id`` of every event.
        cwd: the project folder the session ran in.
        agent: the ``agent`` field of every event.
        subagent: the records are a subagent's own file (``<session>/subagents/agent-<id>``):
            its sidechain records are its own.
    """

    def __init__(
        self,
        *,
        session_id: str | None,
        cwd: str | None,
        agent: str = "claude",
        subagent: bool = False,
    ) -> None:
        self._sid = session_id
        self._cwd = cwd
        self._agent = agent
        self._subagent = subagent
        self._open: dict[str, ToolCallStarted] = {}
        self._usage: Message | None = None  # the latest record of the response being written
        self._sidechain = 0

    def start(self) -> list[Event]:
        return [SessionStarted(agent=self._agent, session_id=self._sid, cwd=self._cwd)]

    def feed(self, record: Record) -> list[Event]:
        if record.isSidechain and not self._subagent:
            self._sidechain += 1
            return []
        message = record.message
        if record.type == "assistant" and isinstance(message, Message):
            return self._assistant(message)
        events = self._flush_usage()
        if record.type == "user" and isinstance(message, Message):
            if record.isMeta is not True:
                events += self._user(message)
        elif record.type == "cost-state":
            events += self._cost(record.totalCostUSD)
        elif record.type == "permission-mode":
            if isinstance(record.permissionMode, str):
                data = {"currentModeId": record.permissionMode}
                events.append(self._updated("current_mode_update", data))
        elif record.type not in SKIPPED:
            raw = msgspec.json.encode(record).decode()
            events.append(
                Unknown(agent=self._agent, session_id=self._sid, upstream_type=record.type, raw=raw)
            )
        return events

    def _updated(self, update: str, data: dict[str, Any]) -> SessionUpdated:
        return SessionUpdated(agent=self._agent, session_id=self._sid, update=update, data=data)

    def _cost(self, total: Any) -> list[Event]:
        """The session's cost so far, as ACP's ``usage_update`` says it."""
        if isinstance(total, bool) or not isinstance(total, int | float):
            return []
        return [self._updated("usage_update", {"cost": {"amount": total, "currency": "USD"}})]

    def finish(self) -> list[Event]:
        """The last response's usage; calls that never got a result end ``cancelled``."""
        events = self._flush_usage()
        for call_id, started in self._open.items():
            warning = f"{started.name} call {call_id!r} has no result"
            events += close_unreported(self._agent, self._sid, call_id, warning=warning)
        self._open.clear()
        if self._sidechain:
            events.append(
                notice(
                    self._agent,
                    self._sid,
                    f"{self._sidechain} subagent (sidechain) records left out: gemwire reads "
                    "Claude Code's subagents from their own files",
                    severity="info",
                )
            )
        return events

    def _assistant(self, message: Message) -> list[Event]:
        agent, sid = self._agent, self._sid
        kept = self._usage
        events = self._flush_usage() if kept is not None and kept.id != message.id else []
        self._usage = message
        content = message.content
        if isinstance(content, str):
            if content:
                events.append(MessageDelta(agent=agent, session_id=sid, text=content))
            return events
        for block in content:
            if block.type == "text" and isinstance(block.text, str) and block.text:
                events.append(MessageDelta(agent=agent, session_id=sid, text=block.text))
            elif block.type == "thinking" and isinstance(block.thinking, str) and block.thinking:
                events.append(ThoughtDelta(agent=agent, session_id=sid, text=block.thinking))
            elif block.type == "tool_use" and isinstance(block.id, str):
                events.append(self._started(block, block.id))
        return events

    def _started(self, block: ContentBlock, call_id: str) -> ToolCallStarted:
        name = block.name if isinstance(block.name, str) else "(unnamed tool)"
        arguments = block.input if isinstance(block.input, dict) else {}
        path = next((p for f in _PATH_FIELDS if isinstance(p := arguments.get(f), str)), None)
        command = arguments.get("command")
        title = (
            command if isinstance(command, str) else f"{name} {path}" if path is not None else name
        )
        started = ToolCallStarted(
            agent=self._agent,
            session_id=self._sid,
            call_id=call_id,
            name=name,
            kind=CLAUDE_TOOL_KINDS.get(name, "other"),
            title=title,
            input=arguments,
            locations=[Location(path=path)] if path is not None else [],
        )
        self._open[call_id] = started
        return started

    def _user(self, message: Message) -> list[Event]:
        content = message.content
        if isinstance(content, str):
            return self._prompt(content)
        events: list[Event] = []
        for block in content:
            if block.type == "text" and isinstance(block.text, str):
                events += self._prompt(block.text)
            elif block.type == "tool_result" and isinstance(block.tool_use_id, str):
                events += self._result(block, block.tool_use_id)
        return events

    def _prompt(self, text: str) -> list[Event]:
        if not text.strip():
            return []
        if text.startswith(_INTERRUPTED):  # what Claude Code records for a cancel or a denial
            message = text.strip().strip("[]")
            return [notice(self._agent, self._sid, message, severity="info", source="upstream")]
        return [UserMessage(agent=self._agent, session_id=self._sid, text=text)]

    def _result(self, block: ContentBlock, call_id: str) -> list[Event]:
        started = self._open.pop(call_id, None)
        if started is None:
            return [notice(self._agent, self._sid, f"a result for unknown call {call_id!r}")]
        text = _text(block.content) if block.content is not UNSET else ""
        failed = block.is_error is True
        events: list[Event] = [
            ToolCallFinished(
                agent=self._agent,
                session_id=self._sid,
                call_id=call_id,
                status="failed" if failed else "completed",
                output=text or None,
                error=ToolError(type="unknown", message=text) if failed else None,
            )
        ]
        change = _CHANGES.get(started.name)
        if change is not None and not failed and started.locations:
            events.append(
                FileChanged(
                    agent=self._agent,
                    session_id=self._sid,
                    path=started.locations[0].path,
                    change=change,
                    call_id=call_id,
                    derived=True,
                )
            )
        return events

    def _flush_usage(self) -> list[Event]:
        """The tokens of the response written last: its records each carry the usage so
        far, so the last one counts, once."""
        message, self._usage = self._usage, None
        if message is None or not isinstance(message.usage, Usage):
            return []
        usage = message.usage
        cached = usage.cache_read_input_tokens or 0
        prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
        total = prompt + usage.output_tokens
        tokens = ModelUsage(
            input_tokens=prompt,
            output_tokens=usage.output_tokens,
            cached_tokens=cached,
            total_tokens=total,
        )
        model = message.model if isinstance(message.model, str) else None
        return [
            UsageReported(
                agent=self._agent,
                session_id=self._sid,
                usage=TokenUsage(
                    input_tokens=prompt,
                    output_tokens=usage.output_tokens,
                    cached_tokens=cached,
                    total_tokens=total,
                    by_model={model: tokens} if model else {},
                ),
            )
        ]
