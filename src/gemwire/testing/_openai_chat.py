"""The OpenAI Chat Completions dialect (``POST /v1/chat/completions``), for Qwen Code and
OpenCode (through ``@ai-sdk/openai-compatible``).

A streamed reply is ``chat.completion.chunk`` events: the role, then ``content`` deltas,
thoughts as ``reasoning_content`` deltas (the field DeepSeek and Qwen models send, read by
both agents), calls as ``tool_calls`` deltas (name first, then the arguments), a last chunk
with ``finish_reason``, a usage chunk, and ``data: [DONE]``.
"""

from __future__ import annotations

import json
from typing import Any

from gemwire.testing import _dialect
from gemwire.testing._dialect import SIDE_CALL_TEXT, Step, call_id, pieces, sse
from gemwire.testing.scenario import Delay, Fail, FunctionCall, Hang, Reply, Text, Thought, Truncate

__all__ = (
    "TRUNCATED",
    "error",
    "error_body",
    "models_response",
    "side_call_response",
    "stream",
    "user_texts",
)

TRUNCATED = b'data: {"id": "chatcmpl-gemwire", "object": "chat.completion.ch'

# Types and codes of the real API's errors, by status
# (https://platform.openai.com/docs/guides/error-codes).
_ERRORS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1s.",
    ),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}

_FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}


def user_texts(body: Any) -> list[str]:
    return _dialect.user_texts((body or {}).get("messages"), "text")


def error_body(fail: Fail) -> dict[str, Any]:
    kind, code, default = _ERRORS.get(fail.status, ("server_error", None, "Error."))
    return {
        "error": {"message": fail.message or default, "type": kind, "param": None, "code": code}
    }


def error(fail: Fail) -> tuple[dict[str, str], Any]:
    headers = {"x-request-id": "req_gemwire_scripted"}
    if fail.retry_delay is not None:
        headers["retry-after"] = f"{fail.retry_delay:g}"
    return headers, error_body(fail)


def models_response(model: str) -> dict[str, Any]:
    """``GET /v1/models``: the one scripted model."""
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "gemwire"}],
    }


def side_call_response(model: str) -> dict[str, Any]:
    """A non-streamed completion, for side calls (requests that declare no tools)."""
    return {
        "id": "chatcmpl-gemwire-side-call",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": SIDE_CALL_TEXT},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def stream(reply: Reply, model: str, turn: int, request: Any) -> list[Step]:
    steps: list[Step] = [_chunk(model, {"role": "assistant", "content": ""})]
    calls = 0
    for piece in pieces(reply.chunks):
        match piece:
            case Text(text=text):
                steps.append(_chunk(model, {"content": text}))
            case Thought(text=text):
                steps.append(_chunk(model, {"reasoning_content": text}))
            case FunctionCall(name=name, args=args):
                head = {
                    "index": calls,
                    "id": call_id(piece, turn, calls, "call_"),
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
                tail = {"index": calls, "function": {"arguments": json.dumps(args)}}
                steps.append(_chunk(model, {"tool_calls": [head]}))
                steps.append(_chunk(model, {"tool_calls": [tail]}))
                calls += 1
            case Delay() | Hang() | Truncate():
                steps.append(piece)
    finish = "tool_calls" if calls else _FINISH_REASONS.get(reply.finish_reason, "stop")
    steps.append(_chunk(model, {}, finish_reason=finish))
    usage = reply.usage
    steps.append(
        sse(
            {
                "id": "chatcmpl-gemwire",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": {
                    "prompt_tokens": usage.prompt,
                    "completion_tokens": usage.output + usage.thoughts,
                    "total_tokens": usage.total,
                    "prompt_tokens_details": {"cached_tokens": usage.cached},
                    "completion_tokens_details": {"reasoning_tokens": usage.thoughts},
                },
            }
        )
    )
    steps.append(b"data: [DONE]\n\n")
    return steps


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return sse(
        {
            "id": "chatcmpl-gemwire",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }
    )
