"""The Gemini stream-json reducer: decoded stream items in, normalized events out.

Pure and deterministic: no I/O, no clock. ``feed()`` takes what `GeminiStreamDecoder`
produces (wire events and its records for noise, unknown and oversized lines);
``finish()`` closes the turn. Exactly one `TurnCompleted` comes out, from ``result`` or
from ``finish()``. The mapping is documented, row by row, in docs/events.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from msgspec import UNSET

from gemwire._normalize.answer import Answer
from gemwire._normalize.gemini_errors import (
    FATAL_KINDS,
    TURN_CUT_SHORT,
    api_error_kind,
    missing_result_error,
    stop_reason_for,
)
from gemwire._normalize.gemini_tools import (
    FILE_WRITERS,
    derived_file_change,
    find_unified_diff,
    tool_call_started,
)
from gemwire._normalize.notices import notice
from gemwire._normalize.open_calls import close_unreported
from gemwire.events import (
    Event,
    MessageDelta,
    ModelUsage,
    SessionStarted,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolError,
    TurnCompleted,
    TurnError,
    Unknown,
    UsageReported,
    UserMessage,
)
from gemwire.protocol.gemini import (
    DecodedItem,
    InvalidUtf8,
    LoneSurrogates,
    MalformedLine,
    NoiseLine,
    OversizedLine,
    UnknownWireEvent,
)
from gemwire.wire.gemini_stream import (
    ErrorEvent,
    InitEvent,
    MessageEvent,
    ResultEvent,
    StreamStats,
    ToolError as WireError,
    ToolResultEvent,
    ToolUseEvent,
)

__all__ = ("GeminiNormalizer",)

# Gemini CLI before 0.30 prints this as an *assistant* message when --prompt is used (which
# gemwire does for --resume there); it is not the model's answer.
_PROMPT_FLAG_DEPRECATION = (
    "The --prompt (-p) flag has been deprecated and will be removed in a future version. "
    "Please use a positional argument for your prompt. See gemini --help for more information.\n"
)


def _usage(stats: StreamStats) -> TokenUsage:
    models = stats.models if isinstance(stats.models, dict) else {}
    return TokenUsage(
        input_tokens=stats.input_tokens,
        output_tokens=stats.output_tokens,
        cached_tokens=stats.cached if isinstance(stats.cached, int) else None,
        total_tokens=stats.total_tokens,
        by_model={
            name: ModelUsage(
                input_tokens=model.input_tokens,
                output_tokens=model.output_tokens,
                cached_tokens=model.cached,
                total_tokens=model.total_tokens,
            )
            for name, model in models.items()
        },
    )


_UNEXPLAINED = (
    "Gemini CLI ended the run with status error and said nothing of why "
    "(no error line came before its result)"
)


class GeminiNormalizer:
    """Reduces one Gemini stream-json run to normalized events.

    Args:
        cwd: the run's working directory, to resolve the relative paths the model uses
            (locations and changed files); paths stay as given when it is ``None``.
        agent: the ``agent`` field of every event.
    """

    def __init__(self, *, cwd: str | None = None, agent: str = "gemini") -> None:
        self._cwd = cwd
        self._agent = agent
        self._session_id: str | None = None
        self._answer = Answer()
        self._calls: dict[str, ToolCallStarted] = {}
        self._cut_short = False
        self._last_error_notice: str | None = None
        self._completed = False

    @property
    def completed(self) -> bool:
        """Whether the turn has ended (a `TurnCompleted` was produced)."""
        return self._completed

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def feed(self, item: DecodedItem) -> list[Event]:
        return self.feed_all((item,))

    def feed_all(self, items: Iterable[DecodedItem]) -> list[Event]:
        """The events of many items, in order: `feed` for each, in one list."""
        out: list[Event] = []
        append, handlers = out.append, _HANDLERS
        agent, cwd, calls, answer = self._agent, self._cwd, self._calls, self._answer
        sid = self._session_id
        for item in items:
            # Text deltas and tool calls, most of a stream, inline: a call to a handler cost
            # about as much as building their event.
            if (
                type(item) is MessageEvent
                and item.role == "assistant"
                and item.content != _PROMPT_FLAG_DEPRECATION
            ):
                answer.add(item.content)
                append(MessageDelta(agent=agent, session_id=sid, text=item.content))
            elif type(item) is ToolUseEvent:
                answer.tools_called()
                started = tool_call_started(
                    agent, sid, item.tool_id, item.tool_name, item.parameters, cwd
                )
                calls[item.tool_id] = started
                append(started)
            else:
                # The rest through a table by exact type: a chain of isinstance checks per
                # line cost more than building the event.
                handler = handlers.get(type(item))
                if handler is None:
                    raise TypeError(f"not a decoded Gemini stream item: {item!r}")
                handler(self, item, out)
                sid = self._session_id  # an init line sets it
        return out

    def finish(
        self, *, exit_code: int | None = None, stopped: TurnError | None = None
    ) -> list[Event]:
        """End of stream. Closes the turn if no ``result`` did.

        ``stopped`` is why the caller stopped the agent (a timeout, a budget), which then
        is the error. Otherwise ``exit_code`` (when the process is known) chooses the error
        kind; without it the missing ``result`` is a ``protocol`` error.
        """
        if self._completed:
            return []
        events = self._close_open_calls()
        if stopped is not None:
            error = msgspec.structs.replace(stopped, exit_code=exit_code)
            events.append(
                self._complete(
                    ok=False,
                    stop_reason=stop_reason_for(stopped.kind),
                    error=error,
                    usage=None,
                    duration_ms=None,
                )
            )
            return events
        events.append(
            self._complete(
                ok=False,
                stop_reason="error",
                error=missing_result_error(exit_code),
                usage=None,
                duration_ms=None,
            )
        )
        return events

    def _init(self, item: InitEvent, out: list[Event]) -> None:
        self._session_id = item.session_id
        out.append(SessionStarted(agent=self._agent, session_id=item.session_id, model=item.model))

    def _message(self, item: MessageEvent, out: list[Event]) -> None:
        # The prompt and the deprecation notice: other text deltas are handled in feed_all.
        if item.role == "user":
            out.append(
                UserMessage(agent=self._agent, session_id=self._session_id, text=item.content)
            )
        else:
            message = item.content.rstrip("\n")
            out.append(notice(self._agent, self._session_id, message, source="upstream"))

    def _tool_result(self, item: ToolResultEvent, out: list[Event]) -> None:
        call = self._calls.pop(item.tool_id, None)
        if call is None:
            message = f"tool result for unknown call {item.tool_id!r} ({item.status})"
            out.append(notice(self._agent, self._session_id, message))
            return
        output = None if item.output is UNSET else item.output
        error = (
            None
            if item.error is UNSET
            else ToolError(type=item.error.type, message=item.error.message)
        )
        ok = item.status == "success"
        out.append(
            ToolCallFinished(
                agent=self._agent,
                session_id=self._session_id,
                call_id=item.tool_id,
                status="completed" if ok else "failed",
                output=output,
                error=error,
                diff=find_unified_diff(output) if output else None,
            )
        )
        if ok and call.name in FILE_WRITERS:  # checked here too: a call less per result
            changed = derived_file_change(call, self._session_id)
            if changed is not None:
                out.append(changed)

    def _error(self, item: ErrorEvent, out: list[Event]) -> None:
        if item.message.startswith(TURN_CUT_SHORT):
            self._cut_short = True
        if item.severity == "error":
            self._last_error_notice = item.message
        sid = self._session_id
        out.append(
            notice(self._agent, sid, item.message, severity=item.severity, source="upstream")
        )

    def _noise(self, item: NoiseLine, out: list[Event]) -> None:
        out.append(
            notice(self._agent, self._session_id, item.text, severity="info", source="upstream")
        )

    def _unknown(self, item: UnknownWireEvent | MalformedLine, out: list[Event]) -> None:
        out.append(
            Unknown(
                agent=self._agent,
                session_id=self._session_id,
                upstream_type=item.type,
                raw=item.line,
            )
        )

    def _oversized(self, item: OversizedLine, out: list[Event]) -> None:
        message = f"skipped a {item.size}-byte line: over the {item.limit}-byte limit"
        out.append(notice(self._agent, self._session_id, message))

    def _invalid_utf8(self, item: InvalidUtf8, out: list[Event]) -> None:
        message = f"replaced {item.count} invalid UTF-8 byte(s) in the agent's output"
        out.append(notice(self._agent, self._session_id, message))

    def _lone_surrogates(self, item: LoneSurrogates, out: list[Event]) -> None:
        out.append(notice(self._agent, self._session_id, item.message))

    def _close_open_calls(self) -> list[Event]:
        events: list[Event] = []
        for call_id, started in self._calls.items():
            warning = f"{started.name} call {call_id!r} never reported a result"
            events += close_unreported(self._agent, self._session_id, call_id, warning=warning)
        self._calls.clear()
        return events

    def _result(self, item: ResultEvent, out: list[Event]) -> None:
        if self._completed:
            message = f"ignored a second result ({item.status}); the first one stands"
            out.append(notice(self._agent, self._session_id, message))
            return
        out += self._close_open_calls()
        agent, sid = self._agent, self._session_id
        stats = item.stats if isinstance(item.stats, StreamStats) else None
        usage = _usage(stats) if stats is not None else None
        if usage is not None:
            out.append(UsageReported(agent=agent, session_id=sid, usage=usage))
        duration = stats.duration_ms if stats is not None else None
        if item.status == "success":
            stop_reason = "max_turn_requests" if self._cut_short else "end_turn"
            out.append(
                self._complete(
                    ok=True, stop_reason=stop_reason, error=None, usage=usage, duration_ms=duration
                )
            )
            return
        if isinstance(item.error, WireError):
            kind = FATAL_KINDS.get(item.error.type) or (
                api_error_kind(item.error.message) if "API Error" in item.error.message else "agent"
            )
            error = TurnError(kind=kind, message=item.error.message)
        elif self._last_error_notice is not None:
            # Empty or invalid model responses: Gemini says why only in the error line before
            # (both paths, docs/gemini-cli.md#the-experimental-agent-session-path).
            error = TurnError(kind="api", message=self._last_error_notice)
        else:
            error = TurnError(kind="agent", message=_UNEXPLAINED)
        stop_reason = stop_reason_for(error.kind)
        # Gemini reports duration_ms 0 on every error path: unknown, not instant.
        out.append(
            self._complete(
                ok=False,
                stop_reason=stop_reason,
                error=error,
                usage=usage,
                duration_ms=duration or None,
            )
        )

    def _complete(
        self,
        *,
        ok: bool,
        stop_reason: str,
        error: TurnError | None,
        usage: TokenUsage | None,
        duration_ms: int | None,
    ) -> TurnCompleted:
        self._completed = True
        return TurnCompleted(
            agent=self._agent,
            session_id=self._session_id,
            ok=ok,
            stop_reason=stop_reason,
            error=error,
            answer=self._answer.text(),
            usage=usage,
            duration_ms=duration_ms,
        )


# What `GeminiNormalizer.feed_all` calls for each type of `DecodedItem` it does not handle
# inline (tool calls, and text deltas other than the prompt and the deprecation notice).
_Handler = Callable[[GeminiNormalizer, Any, list[Event]], None]
_HANDLERS: dict[type, _Handler] = {
    InitEvent: GeminiNormalizer._init,
    MessageEvent: GeminiNormalizer._message,
    ToolResultEvent: GeminiNormalizer._tool_result,
    ErrorEvent: GeminiNormalizer._error,
    ResultEvent: GeminiNormalizer._result,
    NoiseLine: GeminiNormalizer._noise,
    UnknownWireEvent: GeminiNormalizer._unknown,
    MalformedLine: GeminiNormalizer._unknown,
    OversizedLine: GeminiNormalizer._oversized,
    InvalidUtf8: GeminiNormalizer._invalid_utf8,
    LoneSurrogates: GeminiNormalizer._lone_surrogates,
}
