"""Codex's saved session records (its "rollout" files), exactly as upstream names them.

One JSON object a line in ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``, as
Codex 0.137.0 writes them inside ``@zed-industries/codex-acp`` 0.16.0 (the version pinned in
clis/). Every line is a `Record`: a ``timestamp``, a ``type`` and a ``payload`` whose shape
the type says:

- ``session_meta`` — `SessionMeta`: the session's id, its folder, Codex's version (first
  line; its ``base_instructions`` are the system prompt, kept raw);
- ``turn_context`` — `TurnContext`: a turn's model, folder and policies;
- ``response_item`` — `ResponseItem`: what went to or came from the model (the Responses
  API's items: ``message``, ``reasoning``, ``function_call`` / ``function_call_output``,
  ``custom_tool_call`` / ``custom_tool_call_output``, …);
- ``event_msg`` — `EventMsg`: what Codex told its user (``user_message``,
  ``agent_message``, ``token_count`` with the session's cumulative usage,
  ``patch_apply_end`` with the files a patch changed, ``turn_aborted``, …).

The payload stays `msgspec.Raw` in the record and is decoded by type when read
(`gemwire.protocol.codex_session`): a record or payload type gemwire does not know, or a
new field of a new type, never makes a line unreadable. `ResponseItem` and `EventMsg` are
one Struct each with every kind's fields (``type`` says which are set). Records are not
tracked by the cyclic garbage collector (``gc=False``): they hold no reference cycles.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "UPSTREAM_VERSION",
    "ContentItem",
    "EventMsg",
    "FileChange",
    "Payload",
    "Record",
    "ResponseItem",
    "SessionMeta",
    "TokenUsage",
    "TokenUsageInfo",
    "TurnContext",
)

UPSTREAM_VERSION = "codex-acp 0.16.0 (Codex 0.137.0)"


class Record(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One line of a rollout file."""

    type: str
    payload: msgspec.Raw
    timestamp: str | UnsetType = UNSET


class SessionMeta(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``session_meta``: the session itself."""

    id: str
    cwd: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    originator: str | UnsetType = UNSET
    cli_version: str | UnsetType = UNSET
    """Codex's version."""
    source: Any = UNSET
    """``cli``, ``vscode``, ``exec``, ``unknown``, or an object for a subagent's session."""
    model_provider: str | UnsetType = UNSET
    base_instructions: Any = UNSET


class TurnContext(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``turn_context``: what one turn ran with."""

    model: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    turn_id: str | UnsetType = UNSET
    workspace_roots: list[str] | UnsetType = UNSET
    current_date: str | UnsetType = UNSET
    timezone: str | UnsetType = UNSET
    approval_policy: str | UnsetType = UNSET
    sandbox_policy: Any = UNSET
    permission_profile: Any = UNSET
    personality: str | UnsetType = UNSET
    collaboration_mode: Any = UNSET
    multi_agent_version: str | UnsetType = UNSET
    realtime_active: bool | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    """The reasoning summary setting (``auto``, …)."""


class ContentItem(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A part of a message's ``content`` (``input_text``, ``output_text``, ``input_image``)
    or of a reasoning ``summary`` (``summary_text``)."""

    type: str
    text: str | UnsetType = UNSET
    image_url: str | UnsetType = UNSET


class ResponseItem(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``response_item``: one Responses API item; ``type`` says which fields it has."""

    type: str
    role: str | UnsetType = UNSET
    """``message``: ``user``, ``assistant`` or ``developer``, and its ``content``."""
    content: list[ContentItem] | UnsetType | None = UNSET
    summary: list[ContentItem] | UnsetType = UNSET
    """``reasoning``: the summary shown (its ``content`` and ``encrypted_content``, the
    model's own, are not)."""
    encrypted_content: str | UnsetType | None = UNSET
    name: str | UnsetType = UNSET
    """``function_call`` (JSON ``arguments``) and ``custom_tool_call`` (free-form
    ``input``): the tool's name and the call's id."""
    arguments: str | UnsetType = UNSET
    input: str | UnsetType = UNSET
    call_id: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    output: Any = UNSET
    """``function_call_output`` / ``custom_tool_call_output``: what the model was told
    (text; structured content in some versions)."""
    action: Any = UNSET
    """``local_shell_call``: what to run (``{"type": "exec", "command": [...], ...}``)."""


class TokenUsage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Tokens, in the OpenAI Responses API's accounting: ``input_tokens`` include the
    cached ones, ``output_tokens`` the reasoning ones."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0


class TokenUsageInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``token_count``'s ``info``: the session's usage so far, and the last response's."""

    total_token_usage: TokenUsage
    last_token_usage: TokenUsage | UnsetType = UNSET
    model_context_window: int | UnsetType | None = UNSET


class FileChange(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One file a patch changed: ``add`` (its ``content``), ``update`` (its
    ``unified_diff``, ``move_path`` when renamed) or ``delete``."""

    type: str
    content: str | UnsetType = UNSET
    unified_diff: str | UnsetType = UNSET
    move_path: str | UnsetType | None = UNSET


class EventMsg(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``event_msg``: one event Codex showed its user; ``type`` says which fields it has."""

    type: str
    message: str | UnsetType = UNSET
    """``user_message`` (the prompt as typed) and ``agent_message`` (the answer)."""
    images: Any = UNSET
    local_images: Any = UNSET
    text_elements: Any = UNSET
    phase: str | UnsetType | None = UNSET
    memory_citation: Any = UNSET
    text: str | UnsetType = UNSET
    """``agent_reasoning``: the reasoning summary shown."""
    info: TokenUsageInfo | UnsetType | None = UNSET
    """``token_count``: ``None`` before the first response."""
    rate_limits: Any = UNSET
    turn_id: str | UnsetType = UNSET
    started_at: int | UnsetType = UNSET
    model_context_window: int | UnsetType | None = UNSET
    collaboration_mode_kind: str | UnsetType = UNSET
    last_agent_message: str | UnsetType | None = UNSET
    completed_at: int | UnsetType | None = UNSET
    duration_ms: int | UnsetType | None = UNSET
    time_to_first_token_ms: int | UnsetType | None = UNSET
    reason: str | UnsetType = UNSET
    """``turn_aborted``: ``interrupted``, …"""
    call_id: str | UnsetType = UNSET
    """``patch_apply_end``: the call, what the patch printed, whether it applied, and the
    files it changed (absolute paths)."""
    stdout: str | UnsetType = UNSET
    stderr: str | UnsetType = UNSET
    success: bool | UnsetType = UNSET
    changes: dict[str, FileChange] | UnsetType = UNSET
    status: str | UnsetType = UNSET


Payload = SessionMeta | TurnContext | ResponseItem | EventMsg
"""A record's payload, decoded by its record type."""
