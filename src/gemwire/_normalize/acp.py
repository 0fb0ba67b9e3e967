"""The ACP reducer: one session's updates, permission requests and prompt results in,
normalized events out.

Pure and deterministic: no I/O, no clock. The runner tells it what happened on the
connection (`started`, `prompt_sent`, `feed`, `permission_requested`,
`permission_resolved`) and ends each turn with `finish`, which produces exactly one
`TurnCompleted`. Between `begin_replay` and the next prompt every event is marked
``replay`` (a loaded session's history, which an agent may keep sending after its
answer to ``session/load``).

Tool calls always end in a `ToolCallFinished`, even where the agent never says so:
Gemini CLI announces a call that needs permission only inside the permission request,
and sends nothing more when the call is rejected; such calls are finished when the
turn ends (``cancelled``, error type ``rejected``). The mapping is documented, row by
row, in docs/acp.md.
"""

from __future__ import annotations

from typing import assert_never

import msgspec

from gemwire._normalize import acp_updates as updates
from gemwire._normalize.acp_tool_calls import OpenCall, finished, text_of, unified_diff
from gemwire._normalize.acp_usage import ReportedUsage, prompt_usage
from gemwire._normalize.answer import Answer
from gemwire._normalize.open_calls import close_unreported
from gemwire.events import (
    Event,
    Location,
    MessageDelta,
    PermissionOption,
    PermissionRequested,
    PermissionResolved,
    PlanEntry,
    PlanUpdated,
    SessionStarted,
    SessionUpdated,
    ThoughtDelta,
    ToolCallStarted,
    ToolCallUpdated,
    ToolError,
    TurnCompleted,
    TurnError,
    Unknown,
    UsageReported,
    UserMessage,
)
from gemwire.protocol.acp import SessionUpdate, UnknownUpdate
from gemwire.wire import acp
from gemwire.wire.acp import update as variant

__all__ = ("AcpNormalizer", "prompt_text")

_FINAL = ("completed", "failed")


def _untagged(update: variant.SessionUpdate) -> dict[str, object]:
    """An update's fields as sent, without its ``sessionUpdate`` tag."""
    data: dict[str, object] = msgspec.to_builtins(update)
    del data["sessionUpdate"]
    return data


def prompt_text(prompt: list[acp.ContentBlock]) -> str:
    """What a person typed, from a prompt's blocks (links and resources by their URI)."""
    return " ".join(map(updates.block_text, prompt))


class AcpNormalizer:
    """Reduces one ACP session to normalized events; see the module docstring.

    Args:
        agent: the ``agent`` field of every event (``acp:<agent name>``).
        session_id: the session's id.
    """

    def __init__(self, *, agent: str, session_id: str) -> None:
        self._agent = agent
        self._session_id = session_id
        self._calls: dict[str, OpenCall] = {}
        self._answer = Answer()
        self._replaying = False
        self._cancelling = False
        self._usage = ReportedUsage()
        self._model: str | None = None
        """The session's model as last announced (``session_started``, a config option)."""

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def answer(self) -> str:
        """The assistant text of the current turn so far."""
        return self._answer.text()

    def started(
        self,
        *,
        cwd: str,
        model: str | None = None,
        agent_version: str | None = None,
        new: bool = False,
    ) -> list[Event]:
        """The session is open; ``new``: created on this connection (it cost nothing yet)."""
        self._model = model
        if new:
            self._usage.opened_new()
        return [
            SessionStarted(
                agent=self._agent,
                session_id=self._session_id,
                model=model,
                cwd=cwd,
                agent_version=agent_version,
            )
        ]

    def begin_replay(self) -> None:
        """A ``session/load`` was sent: what follows is history, until the next prompt."""
        self._replaying = True

    def prompt_sent(self, prompt: list[acp.ContentBlock]) -> list[Event]:
        """A new turn starts with this prompt."""
        self._replaying = False
        self._cancelling = False
        self._answer.clear()
        return [
            UserMessage(agent=self._agent, session_id=self._session_id, text=prompt_text(prompt))
        ]

    def cancel_requested(self) -> None:
        """``session/cancel`` was sent: calls still open end as ``cancelled``, whatever the
        agent reports of them later (ACP's prompt turn: the client marks them so; Gemini CLI
        reports a cancelled shell call ``completed``, "Command cancelled by user.")."""
        self._cancelling = True
        for call in self._calls.values():
            call.cancelled = True

    def feed(self, item: SessionUpdate | UnknownUpdate) -> list[Event]:
        events = self._close_rejected(item) + self._update(item)
        if self._replaying:
            return [msgspec.structs.replace(e, replay=True) for e in events]
        return events

    def _update(self, item: SessionUpdate | UnknownUpdate) -> list[Event]:
        agent, sid = self._agent, self._session_id
        if isinstance(item, UnknownUpdate):
            return [Unknown(agent=agent, session_id=sid, upstream_type=item.kind, raw=item.raw)]
        update = item.update
        match update:
            case (
                variant.AgentMessageChunk()
                | variant.AgentThoughtChunk()
                | variant.UserMessageChunk()
            ):
                return self._chunk(update)
            case variant.ToolCall():
                return self._tool_call(update)
            case variant.ToolCallUpdate():
                return self._tool_call_update(update)
            case variant.Plan():
                entries = [
                    PlanEntry(content=e.content, status=e.status, priority=e.priority)
                    for e in update.entries
                ]
                return [PlanUpdated(agent=agent, session_id=sid, entries=entries)]
            case variant.Notice():
                return [updates.upstream_notice(agent, sid, update)]
            case variant.PlanUpdate():
                return [updates.plan_updated(agent, sid, update)]
            case variant.PlanRemoved():
                return [updates.plan_removed(agent, sid, update)]
            case variant.SubagentUpdate():
                return [updates.subagent_updated(agent, sid, update)]
            case variant.SessionMessage() | variant.SessionMessageChunk():
                return [updates.session_message(agent, sid, update)]
            case variant.UsageUpdate():
                if not self._replaying:
                    self._usage.feed(update)
            case variant.ConfigOptionUpdate():
                self._model = updates.config_model(update.config_options) or self._model
            case (
                variant.AvailableCommandsUpdate()
                | variant.CurrentModeUpdate()
                | variant.SessionInfoUpdate()
                | variant.CompactionUpdate()
                | variant.CompactionSummaryChunk()
            ):
                pass
            case _:
                assert_never(update)
        # The session's state (commands, mode, config, title, usage, compaction): as sent.
        return [
            SessionUpdated(agent=agent, session_id=sid, update=item.kind, data=_untagged(update))
        ]

    def _close_rejected(self, item: SessionUpdate | UnknownUpdate) -> list[Event]:
        """Finish rejected calls once the agent has moved on without a word about them."""
        if not self._calls:
            return []
        update = item.update if isinstance(item, SessionUpdate) else None
        about = (
            update.tool_call_id if isinstance(update, acp.ToolCall | acp.ToolCallUpdate) else None
        )
        rejected = [
            call_id
            for call_id, call in self._calls.items()
            if call.rejected is not None and call_id != about
        ]
        return [event for call_id in rejected for event in self._finish_unreported(call_id)]

    def _chunk(
        self,
        chunk: variant.UserMessageChunk | variant.AgentMessageChunk | variant.AgentThoughtChunk,
    ) -> list[Event]:
        agent, sid = self._agent, self._session_id
        content = chunk.content
        if not isinstance(content, acp.TextContent):
            raw = msgspec.json.encode(_untagged(chunk)).decode()
            kind = variant.KIND_OF[type(chunk)]
            return [Unknown(agent=agent, session_id=sid, upstream_type=kind, raw=raw)]
        text = content.text
        if isinstance(chunk, variant.UserMessageChunk):
            return [UserMessage(agent=agent, session_id=sid, text=text)]
        if isinstance(chunk, variant.AgentThoughtChunk):
            return [ThoughtDelta(agent=agent, session_id=sid, text=text)]
        mode = updates.in_band_mode(agent, text)
        if mode is not None:  # the agent's mode changed: not words of its answer
            return [updates.mode_changed(agent, sid, mode)]
        if not self._replaying:
            self._answer.add(text)
        return [MessageDelta(agent=agent, session_id=sid, text=text)]

    def _start(self, call_id: str, update: acp.ToolCall | acp.ToolCallUpdate) -> list[Event]:
        call = self._calls[call_id] = OpenCall(update)
        self._answer.tools_called()
        raw_input = update.raw_input
        # The tool's own name where the agent sends one (unstable upstream), else its kind.
        name = update.name if isinstance(update.name, str) and update.name else call.kind
        return [
            ToolCallStarted(
                agent=self._agent,
                session_id=self._session_id,
                call_id=call_id,
                name=name,
                kind=call.kind,
                title=call.title,
                input=raw_input if isinstance(raw_input, dict) else {},
                locations=[Location(path=loc.path, line=loc.line) for loc in call.locations],
            )
        ]

    def _tool_call(self, update: acp.ToolCall) -> list[Event]:
        call_id = update.tool_call_id
        if call_id in self._calls:  # announced before (in a permission request)
            return self._progress(call_id, update)
        events = self._start(call_id, update)
        if update.status in _FINAL:  # a replayed call comes finished at once
            events += self._finish(call_id)
        return events

    def _tool_call_update(self, update: acp.ToolCallUpdate) -> list[Event]:
        call_id = update.tool_call_id
        events = [] if call_id in self._calls else self._start(call_id, update)
        return events + self._progress(call_id, update)

    def _progress(self, call_id: str, update: acp.ToolCall | acp.ToolCallUpdate) -> list[Event]:
        call = self._calls[call_id]
        call.apply(update)
        if call.status in _FINAL:
            return self._finish(call_id)
        return [
            ToolCallUpdated(
                agent=self._agent,
                session_id=self._session_id,
                call_id=call_id,
                status=call.status,
                content=text_of(call.content),
            )
        ]

    def _finish(self, call_id: str) -> list[Event]:
        return finished(self._agent, self._session_id, call_id, self._calls.pop(call_id))

    def permission_requested(
        self, request_id: str, request: acp.RequestPermissionRequest
    ) -> list[Event]:
        """The agent asks; a call it announces only here is started here. The request says
        what the call is, as known now (its title, kind, proposed diff and text)."""
        call_id = request.tool_call.tool_call_id
        events: list[Event] = []
        if call_id in self._calls:
            self._calls[call_id].apply(request.tool_call)
        else:
            events += self._start(call_id, request.tool_call)
        call = self._calls[call_id]
        options = [
            PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind)
            for o in request.options
        ]
        events.append(
            PermissionRequested(
                agent=self._agent,
                session_id=self._session_id,
                request_id=request_id,
                call_id=call_id,
                options=options,
                title=call.title if call.title != call_id else None,
                kind=call.kind,
                diff=unified_diff([item for item in call.content if isinstance(item, acp.Diff)]),
                content=text_of(call.content),
            )
        )
        return events

    def describe(self, call_id: str) -> tuple[str, str]:
        """An open call's (kind, title) as known so far; ``("other", call_id)`` if none."""
        call = self._calls.get(call_id)
        return (call.kind, call.title) if call is not None else ("other", call_id)

    def permission_resolved(
        self, request_id: str, call_id: str, option: acp.PermissionOption | None
    ) -> list[Event]:
        """The client answered: ``option`` is the one chosen, ``None`` for cancelled."""
        call = self._calls.get(call_id)
        if call is not None and (option is None or option.kind.startswith("reject")):
            call.rejected = option.name if option else "cancelled"
        return [
            PermissionResolved(
                agent=self._agent,
                session_id=self._session_id,
                request_id=request_id,
                call_id=call_id,
                option_id=option.option_id if option else None,
            )
        ]

    def finish(
        self,
        response: acp.PromptResponse | None,
        *,
        error: TurnError | None = None,
        duration_ms: int | None = None,
    ) -> list[Event]:
        """The turn ended: with the agent's answer to ``session/prompt``, or ``error``."""
        agent, sid = self._agent, self._session_id
        events = self._close_open_calls(cancelled=self._cancelling or error is not None)
        usage, agent_cost = self._usage.finish(
            prompt_usage(response) if response is not None else None, self._model
        )
        if usage is not None:
            events.append(UsageReported(agent=agent, session_id=sid, usage=usage))
        if response is None:
            assert error is not None, "a turn without an answer has an error"
            stop_reason = "cancelled" if error.kind == "cancelled" else "error"
        else:
            stop_reason = response.stop_reason
            if stop_reason == "cancelled":  # why, if the client knows (a signal, a caller)
                error = error or TurnError(kind="cancelled", message="the turn was cancelled")
        events.append(
            TurnCompleted(
                agent=agent,
                session_id=sid,
                ok=error is None,
                stop_reason=stop_reason,
                error=error,
                answer=self.answer,
                usage=usage,
                duration_ms=duration_ms,
                agent_cost=agent_cost,
            )
        )
        self._cancelling = False
        return events

    def _close_open_calls(self, *, cancelled: bool) -> list[Event]:
        events: list[Event] = []
        for call_id in list(self._calls):
            events += self._finish_unreported(call_id, warn=not cancelled)
        return events

    def _finish_unreported(self, call_id: str, *, warn: bool = False) -> list[Event]:
        """End a call the agent will not report on: ``cancelled`` (``rejected`` if the
        client denied it)."""
        call = self._calls.pop(call_id)
        agent, sid = self._agent, self._session_id
        if call.rejected is not None:
            error = ToolError(type="rejected", message=f"permission not given ({call.rejected})")
            return close_unreported(agent, sid, call_id, warning=None, error=error)
        warning = f"tool call {call_id!r} never reported a result" if warn else None
        return close_unreported(agent, sid, call_id, warning=warning)
