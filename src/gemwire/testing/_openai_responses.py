"""The OpenAI Responses API dialect (``POST /v1/responses``), for Codex.

A streamed reply is the real event sequence: ``response.created``, then per output item
``response.output_item.added`` ... ``response.output_item.done`` (a ``reasoning`` item with
``response.reasoning_summary_text.delta`` for thoughts, a ``message`` item with
``response.output_text.delta`` for text, a ``function_call`` item with
``response.function_call_arguments.delta`` for each call), and ``response.completed`` with
usage. A call of a tool the request declares as ``custom`` (freeform text, like Codex's
``apply_patch``) is a ``custom_tool_call`` item whose input is the call's ``input`` argument.
Errors are the Chat Completions ones (the same API family).
"""

from __future__ import annotations

import json
from typing import Any

from gemwire.testing import _dialect
from gemwire.testing._dialect import Step, call_id, pieces, sse
from gemwire.testing._openai_chat import error
from gemwire.testing.scenario import Delay, FunctionCall, Hang, Reply, Text, Thought, Truncate

__all__ = ("TRUNCATED", "error", "stream", "user_texts")

TRUNCATED = b'event: response.output_text.delta\ndata: {"type": "response.output_te'


def user_texts(body: Any) -> list[str]:
    items = (body or {}).get("input")
    if isinstance(items, str):
        return [items]
    return _dialect.user_texts(items, "input_text")


class _Items:
    """Builds the output items one by one, each event numbered as the API numbers them."""

    def __init__(self, turn: int, custom_tools: set[str]) -> None:
        self.turn = turn
        self.custom_tools = custom_tools
        self.steps: list[Step] = []
        self.output: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.sequence = 0

    def emit(self, kind: str, **fields: Any) -> None:
        self.sequence += 1
        self.steps.append(sse({"type": kind, "sequence_number": self.sequence, **fields}, kind))

    def part_event(self, kind: str, index_field: str, **fields: Any) -> None:
        """An event of the open item's one part (``index_field``: ``content_index`` of a
        message, ``summary_index`` of reasoning)."""
        assert self.open is not None
        item_id, index = self.open["id"], len(self.output)
        self.emit(kind, item_id=item_id, output_index=index, **{index_field: 0}, **fields)

    def start(self, item: dict[str, Any]) -> None:
        self.close()
        self.open = item
        self.emit("response.output_item.added", output_index=len(self.output), item=item)

    def close(self) -> None:
        item = self.open
        if item is None:
            return
        self.open = None
        index = len(self.output)
        if item["type"] == "message":
            text = item["content"][0]["text"]
            self.emit(
                "response.output_text.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                text=text,
            )
            self.emit(
                "response.content_part.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                part=item["content"][0],
            )
        elif item["type"] == "reasoning":
            self.emit(
                "response.reasoning_summary_text.done",
                item_id=item["id"],
                output_index=index,
                summary_index=0,
                text=item["summary"][0]["text"],
            )
        item = {**item, "status": "completed"} if "status" in item else item
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)

    def text(self, text: str) -> None:
        if self.open is None or self.open["type"] != "message":
            ident = f"msg_gemwire_{self.turn}_{len(self.output)}"
            part = {"type": "output_text", "text": "", "annotations": []}
            self.start(
                {
                    "id": ident,
                    "type": "message",
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [part],
                }
            )
            self.part_event("response.content_part.added", "content_index", part=part)
        assert self.open is not None
        self.open["content"][0] = {**self.open["content"][0]}
        self.open["content"][0]["text"] += text
        self.part_event("response.output_text.delta", "content_index", delta=text)

    def thought(self, text: str) -> None:
        if self.open is None or self.open["type"] != "reasoning":
            ident = f"rs_gemwire_{self.turn}_{len(self.output)}"
            self.start({"id": ident, "type": "reasoning", "summary": []})
            assert self.open is not None
            self.open["summary"] = [{"type": "summary_text", "text": ""}]
            part = {"type": "summary_text", "text": ""}
            self.part_event("response.reasoning_summary_part.added", "summary_index", part=part)
        assert self.open is not None
        self.open["summary"][0]["text"] += text
        self.part_event("response.reasoning_summary_text.delta", "summary_index", delta=text)

    def call(self, call: FunctionCall, number: int) -> None:
        self.close()  # the item before, so that this one's id has its own output index
        ident = f"fc_gemwire_{self.turn}_{len(self.output)}"
        custom = call.name in self.custom_tools
        prefix = "response.custom_tool_call_input" if custom else "response.function_call_arguments"
        field = "input" if custom else "arguments"
        value = str(call.args.get("input", "")) if custom else json.dumps(call.args)
        item = {
            "id": ident,
            "type": "custom_tool_call" if custom else "function_call",
            "status": "in_progress",
            "call_id": call_id(call, self.turn, number, "call_"),
            "name": call.name,
            field: "",
        }
        self.start(item)
        index = len(self.output)
        self.emit(f"{prefix}.delta", item_id=ident, output_index=index, delta=value)
        self.emit(f"{prefix}.done", item_id=ident, output_index=index, **{field: value})
        assert self.open is not None
        self.open[field] = value
        self.close()


def stream(reply: Reply, model: str, turn: int, request: Any) -> list[Step]:
    ident = f"resp_gemwire_{turn}"
    response: dict[str, Any] = {
        "id": ident,
        "object": "response",
        "created_at": 0,
        "status": "in_progress",
        "model": model,
        "output": [],
    }
    custom_tools = {
        tool["name"] for tool in (request or {}).get("tools") or [] if tool.get("type") == "custom"
    }
    items = _Items(turn, custom_tools)
    items.emit("response.created", response=response)
    items.emit("response.in_progress", response=response)
    calls = 0
    for piece in pieces(reply.chunks):
        match piece:
            case Text(text=text):
                items.text(text)
            case Thought(text=text):
                items.thought(text)
            case FunctionCall():
                items.call(piece, calls)
                calls += 1
            case Delay() | Hang() | Truncate():
                items.steps.append(piece)
    items.close()
    usage = reply.usage
    done = reply.finish_reason in ("STOP", "FINISH_REASON_UNSPECIFIED") or calls > 0
    items.emit(
        "response.completed" if done else "response.incomplete",
        response={
            **response,
            "status": "completed" if done else "incomplete",
            "incomplete_details": None if done else {"reason": "max_output_tokens"},
            "output": items.output,
            "usage": {
                "input_tokens": usage.prompt,
                "input_tokens_details": {"cached_tokens": usage.cached},
                "output_tokens": usage.output + usage.thoughts,
                "output_tokens_details": {"reasoning_tokens": usage.thoughts},
                "total_tokens": usage.total,
            },
        },
    )
    return items.steps
