"""Gemini's own rules for reading a session message's ``content`` (a string, a ``Part`` or a
list of them), as Gemini CLI 0.61.0 applies them: ``partListUnionToString``
(`content_string`), ``isIgnoredUserContent`` and ``isResumableMessageRecord``
(`is_resumable`), which decide what ``gemini --resume`` lists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = (
    "INJECTED_PREFIXES",
    "content_string",
    "is_ignored_user_content",
    "is_resumable",
    "text_of",
)

INJECTED_PREFIXES = ("<session_context>", "<hook_context>")
"""User messages Gemini injects itself (context, hook output), not typed by the user."""

# partToString(verbose) checks these keys in this order before falling back to ``text``.
_VERBOSE_PARTS: tuple[tuple[str, Callable[[Any], str]], ...] = (
    ("videoMetadata", lambda v: "[Video Metadata]"),
    ("thought", lambda v: f"[Thought: {_js_string(v)}]"),
    ("codeExecutionResult", lambda v: "[Code Execution Result]"),
    ("executableCode", lambda v: "[Executable Code]"),
    ("fileData", lambda v: "[File Data]"),
    ("functionCall", lambda v: f"[Function Call: {_js_string(_get(v, 'name'))}]"),
    ("functionResponse", lambda v: f"[Function Response: {_js_string(_get(v, 'name'))}]"),
)


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _js_string(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return "undefined" if value is None else str(value)


def _part_string(part: Any) -> str:
    if isinstance(part, list):
        # Nested lists flattened with a stack, not recursion: a file may nest them deeper
        # than Python's recursion limit (upstream recurses, on a much deeper JS stack).
        texts = []
        stack = [iter(part)]
        while stack:
            for item in stack[-1]:
                if isinstance(item, list):
                    stack.append(iter(item))
                    break
                texts.append(_part_string(item))
            else:
                stack.pop()
        return "".join(texts)
    if not part:
        return ""
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    for key, render in _VERBOSE_PARTS:
        if key in part:
            return render(part[key])
    if "inlineData" in part:
        return _inline_data(part["inlineData"])
    text = part.get("text")
    return text if isinstance(text, str) else ""


def _inline_data(data: Any) -> str:
    mime = _get(data, "mimeType") or "unknown"
    payload = _get(data, "data") or ""
    kb = -(-len(payload) * 3 // 4) / 1024
    category = next(
        (name for prefix, name in _MEDIA if str(mime).startswith(prefix)),
        "Media",
    )
    return f"[{category}: {mime}, {kb:.1f} KB]"


_MEDIA = (("audio/", "Audio"), ("video/", "Video"), ("image/", "Image"))


def content_string(content: Any) -> str:
    """``partListUnionToString(content)``: text, with non-text parts as ``[...]`` markers."""
    return _part_string(content)


def text_of(content: Any) -> str:
    """The text parts of ``content`` joined (thought parts excluded), as a prompt reads."""
    if isinstance(content, str):
        return content
    # Loops, not comprehensions, on the per-message path: on 3.11 each comprehension is a
    # call of its own, a quarter of the time spent on a user message.
    texts = []
    for part in content if isinstance(content, list) else (content,):
        if (
            isinstance(part, dict)
            and isinstance(text := part.get("text"), str)
            and not part.get("thought")
        ):
            texts.append(text)  # noqa: PERF401
    return "".join(texts)


def is_ignored_user_content(trimmed: str) -> bool:
    """Gemini's ``isIgnoredUserContent``: empty, a ``/`` or ``?`` command, or injected context."""
    return not trimmed or trimmed.startswith(("/", "?", *INJECTED_PREFIXES))


def _head(content: Any, enough: int = 32) -> str:
    """The start of `content_string`: enough to tell an ignored prompt from a real one."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    head = ""
    for part in parts:
        head += _part_string(part)
        if len(head.lstrip()) >= enough:  # longer than every ignored prefix
            break
    return head


def is_resumable(message_type: Any, content: Any, tool_calls: Any, thoughts: Any) -> bool:
    """Gemini's ``isResumableMessageRecord``: a real prompt, or a model message with substance."""
    if message_type == "user":
        return not is_ignored_user_content(_head(content).strip() if content else "")
    if message_type == "gemini":
        if (isinstance(tool_calls, list) and tool_calls) or (
            isinstance(thoughts, list) and thoughts
        ):
            return True
        return bool(content and _head(content, 1).strip())
    return False
