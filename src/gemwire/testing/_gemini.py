"""The Gemini API dialect (``streamGenerateContent``), for Gemini CLI."""

from __future__ import annotations

from typing import Any

from gemwire.testing._dialect import SIDE_CALL_TEXT, Step, sse
from gemwire.testing.scenario import (
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Hang,
    Reply,
    Text,
    Thought,
    Truncate,
)

__all__ = ("BAD_KEY_BODY", "TRUNCATED", "error", "side_call_response", "stream", "user_texts")

TRUNCATED = b'data: {"candidates": [{"content": {"ro'

BAD_KEY_BODY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ],
    }
}


def user_texts(body: Any) -> list[str]:
    return [
        part["text"]
        for content in (body or {}).get("contents") or []
        if content.get("role") == "user"
        for part in content.get("parts") or []
        if isinstance(part.get("text"), str)
    ]


def error(fail: Fail) -> tuple[dict[str, str], Any]:
    return {}, fail.body()


def stream(reply: Reply, model: str, turn: int, request: Any) -> list[Step]:
    """One event per chunk (parallel calls share one); the last event carries
    ``finishReason`` and usage, unless the reply ends by hanging or by cutting the stream."""
    plan = _plan(reply)
    steps: list[Step] = []
    for index, step in enumerate(plan):
        if isinstance(step, list):
            event = _event(step, reply, model, final=index == len(plan) - 1)
            steps.append(sse(event, end=b"\r\n\r\n"))
        else:
            steps.append(step)
    return steps


def _plan(reply: Reply) -> list[list[dict[str, Any]] | Delay | Hang | Truncate]:
    steps: list[list[dict[str, Any]] | Delay | Hang | Truncate] = []
    for chunk in reply.chunks:
        match chunk:
            case Text(text=text):
                steps.append([{"text": text}])
            case Thought(text=text):
                steps.append([{"text": text, "thought": True}])
            case FunctionCall():
                steps.append([_function_call_part(chunk)])
            case FunctionCalls(calls=calls):
                steps.append([_function_call_part(call) for call in calls])
            case Delay() | Hang() | Truncate():
                steps.append(chunk)
    if not steps or not isinstance(steps[-1], list | Hang | Truncate):
        steps.append([])
    return steps


def _function_call_part(call: FunctionCall) -> dict[str, Any]:
    function_call: dict[str, Any] = {"name": call.name, "args": call.args}
    if call.id is not None:
        function_call["id"] = call.id
    return {"functionCall": function_call}


def _event(parts: list[dict[str, Any]], reply: Reply, model: str, *, final: bool) -> Any:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    event: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if final:
        candidate["finishReason"] = reply.finish_reason
        usage = reply.usage
        event["usageMetadata"] = {
            "promptTokenCount": usage.prompt,
            "candidatesTokenCount": usage.output,
            "cachedContentTokenCount": usage.cached,
            "thoughtsTokenCount": usage.thoughts,
            "totalTokenCount": usage.total,
        }
    return event


def side_call_response() -> dict[str, Any]:
    """``generateContent``: the model router, next-speaker check and web tools."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": SIDE_CALL_TEXT}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }
