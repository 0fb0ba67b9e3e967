"""A plain, line-by-line transcript of events, for people (no colour, no terminal tricks)."""

from __future__ import annotations

from typing import TextIO

from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    Notice,
    PermissionRequested,
    PermissionResolved,
    SessionStarted,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    Unknown,
    UserMessage,
)

__all__ = ("Transcript",)

_OUTPUT_LINES = 8


class Transcript:
    """Writes events as they come; answer text flows inline until something else happens."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._mid_line = False

    def write(self, event: Event) -> None:
        if isinstance(event, MessageDelta | ThoughtDelta):
            text = event.text if isinstance(event, MessageDelta) else f"(thinking) {event.text}"
            self._out.write(text)
            self._mid_line = not text.endswith("\n")
            return
        if self._mid_line:
            self._out.write("\n")
            self._mid_line = False
        for line in self._lines(event):
            self._out.write(line + "\n")

    def _lines(self, event: Event) -> list[str]:
        match event:
            case SessionStarted():
                return [f"session {event.session_id} (model {event.model})"]
            case UserMessage():
                return [f"> {line}" for line in event.text.rstrip("\n").split("\n")]
            case ToolCallStarted():
                return [f"[{event.kind}] {event.name}: {event.title}"]
            case ToolCallFinished():
                mark = {"completed": "ok", "failed": "FAILED", "cancelled": "cancelled"}[
                    event.status
                ]
                lines = [f"  -> {mark}" + (f": {event.error.message}" if event.error else "")]
                if event.output and not event.error:
                    output = event.output.rstrip("\n").split("\n")
                    lines += [f"  | {line[:200]}" for line in output[:_OUTPUT_LINES]]
                    if len(output) > _OUTPUT_LINES:
                        lines.append(f"  | ... {len(output) - _OUTPUT_LINES} more lines")
                return lines
            case FileChanged():
                return [f"  {event.change}: {event.path}"]
            case PermissionRequested():
                options = ", ".join(o.option_id for o in event.options)
                return [f"  ? permission asked ({options})"]
            case PermissionResolved():
                return [f"  ? permission: {event.option_id or 'cancelled'}"]
            case Notice():
                return [f"! {event.severity}: {event.message}"]
            case Unknown():
                return [f"? unknown {event.upstream_type or 'message'}: {event.raw[:200]}"]
            case TurnCompleted():
                return [self._outcome(event)]
        return []

    @staticmethod
    def _outcome(turn: TurnCompleted) -> str:
        parts = [f"ok ({turn.stop_reason})" if turn.ok else f"FAILED ({turn.stop_reason})"]
        if turn.error:
            parts.append(f"{turn.error.kind}: {turn.error.message}")
        if turn.usage:
            u = turn.usage
            cached = f", {u.cached_tokens} cached" if u.cached_tokens is not None else ""
            parts.append(
                f"{u.total_tokens} tokens ({u.input_tokens} in, {u.output_tokens} out{cached})"
            )
        if turn.duration_ms is not None:
            parts.append(f"{turn.duration_ms / 1000:.1f} s")
        return "-- " + " · ".join(parts)
