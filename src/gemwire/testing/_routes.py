"""Which API of the scripted model a request speaks, and what it asks for: the request's
method and path pick the dialect (model_server.py serves it)."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ("Action", "DialectName", "route")

DialectName = Literal["gemini", "anthropic", "openai-chat", "openai-responses"]

Action = Literal["turn", "side", "count", "models"]


def route(method: str, path: str, body: Any) -> tuple[DialectName, str | None, str, Action] | None:
    """Which dialect and what for: (dialect, rpc, model, action), or None for no endpoint."""
    if "/models/" in path:
        model_name, _, rpc = path.rpartition("/models/")[2].partition(":")
        actions: dict[str, Action] = {
            "streamGenerateContent": "turn",
            "generateContent": "side",
            "countTokens": "count",
        }
        if method == "POST" and rpc in actions:
            return "gemini", rpc, model_name, actions[rpc]
        return None
    request = body if isinstance(body, dict) else {}
    model_name = str(request.get("model") or "")
    # A model turn declares tools and is streamed; anything else is a side call.
    action: Action = "turn" if request.get("tools") and request.get("stream") else "side"
    if method == "POST" and path.endswith("/messages/count_tokens"):
        return "anthropic", "count_tokens", model_name, "count"
    if method == "POST" and path.endswith("/messages"):
        return "anthropic", "messages", model_name, action
    if method == "POST" and path.endswith("/chat/completions"):
        return "openai-chat", "chat/completions", model_name, action
    if method == "POST" and path.endswith("/responses"):
        # Codex sends every request with tools; its turns are all model turns.
        return "openai-responses", "responses", model_name, "turn"
    if method == "GET" and path.endswith("/models"):
        return "openai-chat", "models", "scripted", "models"
    return None
