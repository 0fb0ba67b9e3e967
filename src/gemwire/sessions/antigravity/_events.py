"""An Antigravity transcript's records -> normalized events (the vocabulary of a live run).

Pure and deterministic: `TranscriptNormalizer` takes ``transcript.jsonl``'s records in step
order (`wire.antigravity.TranscriptRecord`) and yields what they show, record by record:

- ``USER_INPUT``: the prompt (`UserMessage`), without the tags the harness wraps it in;
- ``PLANNER_RESPONSE`` (one model call): its thinking (`ThoughtDelta`), its text
  (`MessageDelta`), each tool call it made (`ToolCallStarted`, numbered ``call-1``, ``call-2``,
  … in the conversation as ``gemwire agent antigravity`` numbers them live), and its tokens
  (`UsageReported`, the model from the database: `models_of`);
- the next record of the model's after a call (``CODE_ACTION``, ``RUN_COMMAND``,
  ``VIEW_FILE``, ``ERROR_MESSAGE``, …): that call's result (`ToolCallFinished`: ``failed``
  with the harness's ``error`` when its status is ``ERROR``, as a denial is; ``cancelled``
  when ``CANCELED``; else ``completed``, a command's exit code whatever it is, as live), and
  for a write or an edit that ran, the file (`FileChanged`);
- an ``ERROR_MESSAGE`` with no call waiting: a notice; any other record: skipped.

A call still waiting when the next prompt comes or the transcript ends never reported its
result (a cancelled turn): it is ``cancelled``, after a notice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

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
    UsageReported,
    UserMessage,
)
from gemwire.wire.antigravity import TranscriptRecord, TranscriptToolCall

__all__ = ("TOOL_KINDS", "TranscriptNormalizer", "model_at", "prompt_text", "tool_input")

AGENT = "antigravity"

TOOL_KINDS: dict[str, ToolKind] = {
    "write_to_file": "edit",
    "replace_file_content": "edit",
    "view_file": "read",
    "run_command": "execute",
    "search_web": "fetch",
    "read_url_content": "fetch",
}
"""The kind of each built-in tool the harness declares, by the model's name (0.1.22); the
rest are ``other``."""

_VERBS = {"write_to_file": "Write", "replace_file_content": "Edit", "view_file": "Read"}
_PATH_ARGS = ("TargetFile", "AbsolutePath")
_NARRATION = ("toolAction", "toolSummary")
"""What the harness makes the model say of every call besides its arguments (left out, as
live)."""


def prompt_text(content: str) -> str:
    """``<USER_REQUEST>\\n…\\n</USER_REQUEST>`` and the metadata after it → the prompt.

    >>> prompt_text("<USER_REQUEST>\\nhi\\n</USER_REQUEST>\\n<ADDITIONAL_METADATA>x")
    'hi'
    """
    start, end = content.find("<USER_REQUEST>"), content.find("</USER_REQUEST>")
    if start < 0 or end < start:
        return content.strip()
    return content[start + len("<USER_REQUEST>") : end].strip()


def tool_input(call: TranscriptToolCall) -> dict[str, Any]:
    """The model's arguments: each value is JSON-encoded again in the transcript (one that
    does not decode is kept as written).

    >>> tool_input(TranscriptToolCall(name="x", args={"A": '"a"', "B": "5", "C": "{", "toolAction": '"W"'}))
    {'A': 'a', 'B': 5, 'C': '{'}
    """
    decoded: dict[str, Any] = {}
    for key, value in call.args.items():
        if key in _NARRATION:
            continue
        try:
            decoded[key] = json.loads(value) if isinstance(value, str) else value
        except ValueError:
            decoded[key] = value
    return decoded


def model_at(models: Mapping[int, str], step: int) -> str | None:
    """The model of the call that made ``step``: its own, else the last one before it.

    >>> model_at({1: "a", 5: "b"}, 3), model_at({1: "a"}, 0)
    ('a', None)
    """
    if step in models:
        return models[step]
    earlier = [index for index in models if index < step]
    return models[max(earlier)] if earlier else None


def _path(args: Mapping[str, Any]) -> str | None:
    return next((v for k in _PATH_ARGS if isinstance(v := args.get(k), str) and v), None)


def _title(name: str, args: Mapping[str, Any]) -> str:
    command = args.get("CommandLine")
    if isinstance(command, str) and command:
        return command
    path = _path(args)
    return f"{_VERBS.get(name, name)} {path}" if path else name


class _Call:
    __slots__ = ("args", "call_id", "name")

    def __init__(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.call_id, self.name, self.args = call_id, name, args


class TranscriptNormalizer:
    """One conversation's records in (in step order), events out."""

    def __init__(
        self, session_id: str | None, cwd: str | None, models: Mapping[int, str] | None = None
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.models = models or {}
        self._waiting: list[_Call] = []
        self._calls = 0

    def start(self) -> list[Event]:
        first = min(self.models, default=None)
        model = self.models[first] if first is not None else None
        return [SessionStarted(agent=AGENT, session_id=self.session_id, model=model, cwd=self.cwd)]

    def feed(self, record: TranscriptRecord) -> list[Event]:
        sid = self.session_id
        if record.type == "USER_INPUT":
            events = self._close("the turn ended before the call reported its result")
            events.append(
                UserMessage(agent=AGENT, session_id=sid, text=prompt_text(record.content))
            )
            return events
        if record.type == "PLANNER_RESPONSE":
            return self._response(record)
        if record.source != "MODEL":
            return []
        if self._waiting:
            return self._result(self._waiting.pop(0), record)
        if record.type == "ERROR_MESSAGE":
            return [notice(AGENT, sid, record.error or record.content, source="upstream")]
        return []

    def finish(self) -> list[Event]:
        return self._close("the conversation ends before the call reported its result")

    def _close(self, why: str) -> list[Event]:
        events: list[Event] = []
        for call in self._waiting:
            warning = f"{call.name} ({call.call_id}): {why}"
            events += close_unreported(AGENT, self.session_id, call.call_id, warning=warning)
        self._waiting = []
        return events

    def _response(self, record: TranscriptRecord) -> list[Event]:
        sid = self.session_id
        events: list[Event] = []
        if record.thinking:
            events.append(ThoughtDelta(agent=AGENT, session_id=sid, text=record.thinking))
        if record.content:
            events.append(MessageDelta(agent=AGENT, session_id=sid, text=record.content))
        for tool in record.tool_calls:
            self._calls += 1
            call = _Call(f"call-{self._calls}", tool.name, tool_input(tool))
            self._waiting.append(call)
            path = _path(call.args)
            events.append(
                ToolCallStarted(
                    agent=AGENT,
                    session_id=sid,
                    call_id=call.call_id,
                    name=tool.name,
                    kind=TOOL_KINDS.get(tool.name, "other"),
                    title=_title(tool.name, call.args),
                    input=call.args,
                    locations=[Location(path=path)] if path else [],
                )
            )
        if record.input_tokens is not None or record.output_tokens is not None:
            events.append(self._usage(record))
        return events

    def _usage(self, record: TranscriptRecord) -> UsageReported:
        spent = record.input_tokens or 0
        said = record.output_tokens or 0
        cached = record.cache_read_tokens or 0
        model = model_at(self.models, record.step_index)
        tokens = ModelUsage(
            input_tokens=spent, output_tokens=said, cached_tokens=cached, total_tokens=spent + said
        )
        usage = TokenUsage(
            input_tokens=spent,
            output_tokens=said,
            cached_tokens=cached,
            total_tokens=spent + said,
            by_model={model: tokens} if model else {},
        )
        return UsageReported(agent=AGENT, session_id=self.session_id, usage=usage)

    def _result(self, call: _Call, record: TranscriptRecord) -> list[Event]:
        sid = self.session_id
        if record.status == "ERROR":
            error = ToolError(type=record.type, message=record.error or record.content)
            finished = ToolCallFinished(
                agent=AGENT,
                session_id=sid,
                call_id=call.call_id,
                status="failed",
                output=record.content,
                error=error,
            )
            return [finished]
        status: Literal["cancelled", "completed"] = (
            "cancelled" if record.status == "CANCELED" else "completed"
        )
        events: list[Event] = [
            ToolCallFinished(
                agent=AGENT,
                session_id=sid,
                call_id=call.call_id,
                status=status,
                output=record.content,
            )
        ]
        path = _path(call.args)
        if status == "completed" and path and TOOL_KINDS.get(call.name) == "edit":
            created = call.name == "write_to_file" and "Created file" in record.content
            change: Literal["created", "modified"] = "created" if created else "modified"
            events.append(
                FileChanged(
                    agent=AGENT,
                    session_id=sid,
                    path=path,
                    change=change,
                    call_id=call.call_id,
                    derived=False,
                )
            )
        return events
