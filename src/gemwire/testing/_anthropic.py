"""The Anthropic Messages API dialect (``POST /v1/messages``), for Claude Code.

A streamed reply is the real event sequence: ``message_start``, then per block
``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` (text as
``text_delta``, thoughts as a ``thinking`` block with ``thinking_delta`` and a
``signature_delta``, calls as ``tool_use`` with ``input_json_delta``), then
``message_delta`` (stop reason, output tokens) and ``message_stop``.
"""

from __future__ import annotations

import json
from typing import Any

from gemwire.testing import _dialect
from gemwire.testing._dialect import SIDE_CALL_TEXT, Step, call_id, pieces, sse
from gemwire.testing.scenario import Delay, Fail, FunctionCall, Hang, Reply, Text, Thought, Truncate

__all__ = (
    "TRUNCATED",
    "count_tokens_response",
    "error",
    "side_call_response",
    "stream",
    "user_texts",
)

TRUNCATED = b'event: content_block_delta\ndata: {"type": "content_block_de'

# Error types and messages of the real API, by status
# (https://docs.anthropic.com/en/api/errors).
_ERRORS = {
    400: ("invalid_request_error", "Your request is invalid."),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        (
            "This request would exceed the rate limit for your organization of 50 requests "
            "per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."
        ),
    ),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}

_STOP_REASONS = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens"}


def user_texts(body: Any) -> list[str]:
    return _dialect.user_texts((body or {}).get("messages"), "text")


def error(fail: Fail) -> tuple[dict[str, str], Any]:
    kind, default = _ERRORS.get(fail.status, ("api_error", "Internal server error"))
    headers = {"request-id": "req_gemwire_scripted"}
    if fail.retry_delay is not None:
        headers["retry-after"] = f"{fail.retry_delay:g}"
    body = {
        "type": "error",
        "error": {"type": kind, "message": fail.message or default},
        "request_id": "req_gemwire_scripted",
    }
    return headers, body


def count_tokens_response() -> dict[str, Any]:
    return {"input_tokens": 100}


def side_call_response(model: str) -> dict[str, Any]:
    """A non-streamed request, or one without tools: a side call, not a scenario turn."""
    return {
        "id": "msg_gemwire_side_call",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": SIDE_CALL_TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def stream(reply: Reply, model: str, turn: int, request: Any) -> list[Step]:
    usage = reply.usage
    steps: list[Step] = [
        sse(
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_gemwire_{turn}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage.prompt - usage.cached,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": usage.cached,
                        "output_tokens": 1,
                    },
                },
            },
            "message_start",
        )
    ]
    index = -1
    open_kind: str | None = None
    calls = 0

    def close() -> None:
        nonlocal open_kind
        if open_kind == "thinking":
            delta = {"type": "signature_delta", "signature": "gemwire-scripted"}
            steps.append(_delta(index, delta))
        if open_kind is not None:
            steps.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        open_kind = None

    def start(kind: str, block: dict[str, Any]) -> None:
        nonlocal index, open_kind
        close()
        index += 1
        open_kind = kind
        steps.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": block},
                "content_block_start",
            )
        )

    for piece in pieces(reply.chunks):
        match piece:
            case Text(text=text):
                if open_kind != "text":
                    start("text", {"type": "text", "text": ""})
                steps.append(_delta(index, {"type": "text_delta", "text": text}))
            case Thought(text=text):
                if open_kind != "thinking":
                    start("thinking", {"type": "thinking", "thinking": "", "signature": ""})
                steps.append(_delta(index, {"type": "thinking_delta", "thinking": text}))
            case FunctionCall(name=name, args=args):
                ident = call_id(piece, turn, calls, "toolu_")
                calls += 1
                start("tool_use", {"type": "tool_use", "id": ident, "name": name, "input": {}})
                steps.append(
                    _delta(index, {"type": "input_json_delta", "partial_json": json.dumps(args)})
                )
                close()
            case Delay() | Hang() | Truncate():
                steps.append(piece)
    close()
    stop_reason = "tool_use" if calls else _STOP_REASONS.get(reply.finish_reason, "end_turn")
    steps.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage.output + usage.thoughts},
            },
            "message_delta",
        )
    )
    steps.append(sse({"type": "message_stop"}, "message_stop"))
    return steps


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse(
        {"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"
    )
