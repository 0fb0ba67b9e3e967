"""Codex's saved session records (its "rollout" files), exactly as upstream names them.

One JSON object a line in ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``, as
Codex 0.137.0 writes them inside ``@zed-industries/codex-acp`` 0.16.0 and Codex 0.166.0 inside
``@agentclientprotocol/codex-acp`` 2.6.0. Every line is a `Record`: a ``timestamp``, a
``type`` and a ``payload`` whose shape the type says (0.166 adds an ``ordinal``):

- ``session_meta`` — `SessionMeta`: the session's id, its folder, Codex's version (first
  line; its ``base_instructions`` are the system prompt, kept raw);
- ``turn_context`` — `TurnContext`: a turn's model, folder and policies;
- ``response_item`` — `ResponseItem`: what went to or came from the model (the Responses
  API's items: ``message``, ``reasoning``, ``function_call`` / ``function_call_output``,
  ``custom_tool_call`` / ``custom_tool_call_output``, …);
- ``event_msg`` — `EventMsg`: what Codex told its user (``user_message``,
  ``agent_message``, ``token_count`` with the session's cumulative usage,
  ``patch_apply_end`` with the files a patch changed, ``turn_aborted``, …). Codex 0.166 writes
  no ``user_message`` / ``agent_message``: what its user saw is in ``item_completed``
  (`ThreadItem`: the prompt, the answer, the reasoning summary, a command run, a patch's
  files), and a turn's settings in ``thread_settings_applied`` (`ThreadSettings`);
- ``token_usage_record`` (Codex 0.166) — `TokenUsageRecord`: one model response's tokens,
  with its turn's and the session's so far;
- ``world_state`` (Codex 0.166): the context Codex gives the model (environments, AGENTS.md,
  instructions' hashes); gemwire does not read it.

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
    "ItemContent",
    "Payload",
    "Record",
    "ResponseItem",
    "SessionMeta",
    "ThreadItem",
    "ThreadSettings",
    "TokenUsage",
    "TokenUsageInfo",
    "TokenUsageRecord",
    "TurnContext",
)

UPSTREAM_VERSION = "codex-acp 0.16.0 (Codex 0.137.0), codex-acp 2.6.0 (Codex 0.166.0)"


class Record(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One line of a rollout file."""

    type: str
    payload: msgspec.Raw
    timestamp: str | UnsetType = UNSET
    ordinal: int | UnsetType = UNSET
    """The line's position in the file (Codex 0.166)."""
    metadata: Any = UNSET
    """Codex 0.166's bookkeeping of a ``response_item`` (where it came from, its revision)."""


class SessionMeta(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``session_meta``: the session itself."""

    id: str
    session_id: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    runtime_workspace_roots: list[str] | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    originator: str | UnsetType = UNSET
    cli_version: str | UnsetType = UNSET
    """Codex's version."""
    source: Any = UNSET
    """``cli``, ``vscode``, ``exec``, ``unknown``, or an object for a subagent's session."""
    model_provider: str | UnsetType = UNSET
    base_instructions: Any = UNSET
    history_mode: str | UnsetType = UNSET
    context_window: Any = UNSET


class TurnContext(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``turn_context``: what one turn ran with."""

    model: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    turn_id: str | UnsetType = UNSET
    root_turn_id: str | UnsetType = UNSET
    workspace_roots: list[str] | UnsetType = UNSET
    current_date: str | UnsetType = UNSET
    timezone: str | UnsetType = UNSET
    approval_policy: str | UnsetType = UNSET
    approvals_reviewer: str | UnsetType = UNSET
    sandbox_policy: Any = UNSET
    file_system_sandbox_policy: Any = UNSET
    disabled_plugin_ids: list[str] | UnsetType = UNSET
    effort: str | UnsetType | None = UNSET
    comp_hash: str | UnsetType = UNSET
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
    annotations: Any = UNSET


class ResponseItem(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``response_item``: one Responses API item; ``type`` says which fields it has."""

    type: str
    id: str | UnsetType | None = UNSET
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
    internal_chat_message_metadata_passthrough: Any = UNSET
    """Codex 0.166's bookkeeping (the turn, the content's provenance)."""


class TokenUsage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Tokens, in the OpenAI Responses API's accounting: ``input_tokens`` include the
    cached ones, ``output_tokens`` the reasoning ones."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0


class TokenUsageInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``token_count``'s ``info``: the session's usage so far, and the last response's."""

    total_token_usage: TokenUsage
    last_token_usage: TokenUsage | UnsetType = UNSET
    model_context_window: int | UnsetType | None = UNSET
    last_usage_includes_reasoning: bool | UnsetType = UNSET


class FileChange(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One file a patch changed: ``add`` (its ``content``), ``update`` (its
    ``unified_diff``, ``move_path`` when renamed) or ``delete``."""

    type: str
    content: str | UnsetType = UNSET
    unified_diff: str | UnsetType = UNSET
    move_path: str | UnsetType | None = UNSET


class ItemContent(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A part of a `ThreadItem`'s ``content``: ``text`` (a prompt's) or ``Text`` (an answer's)."""

    type: str
    text: str | UnsetType = UNSET
    text_elements: Any = UNSET


class ThreadItem(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``item_completed``'s ``item`` (Codex 0.166): one thing its user saw, finished;
    ``type`` says which fields it has."""

    type: str
    id: str | UnsetType = UNSET
    content: list[ItemContent] | UnsetType = UNSET
    """``UserMessage`` (the prompt as typed) and ``AgentMessage`` (the answer)."""
    summary_text: list[str] | UnsetType = UNSET
    """``Reasoning``: the summary shown (``raw_content``, the model's own, is not)."""
    raw_content: Any = UNSET
    changes: dict[str, FileChange] | UnsetType = UNSET
    """``FileChange``: the files a patch changed (absolute paths), its ``status``, and what
    it printed; ``id`` is the call's."""
    status: str | UnsetType = UNSET
    stdout: str | UnsetType = UNSET
    stderr: str | UnsetType = UNSET
    command: list[str] | UnsetType = UNSET
    """``CommandExecution``: the command as run, and how it ended (the call's
    ``function_call_output`` tells the model the same)."""
    cwd: str | UnsetType = UNSET
    process_id: str | UnsetType | None = UNSET
    parsed_cmd: Any = UNSET
    source: str | UnsetType = UNSET
    aggregated_output: str | UnsetType | None = UNSET
    exit_code: int | UnsetType | None = UNSET
    duration: Any = UNSET


class ThreadSettings(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``thread_settings_applied``'s ``thread_settings`` (Codex 0.166): what the next turns
    run with."""

    model: str | UnsetType = UNSET
    model_provider_id: str | UnsetType = UNSET
    service_tier: str | UnsetType | None = UNSET
    approval_policy: str | UnsetType = UNSET
    approvals_reviewer: str | UnsetType = UNSET
    permission_profile: Any = UNSET
    cwd: str | UnsetType = UNSET
    runtime_workspace_roots: list[str] | UnsetType = UNSET
    reasoning_effort: str | UnsetType | None = UNSET
    reasoning_summary: str | UnsetType | None = UNSET
    collaboration_mode: Any = UNSET
    disabled_plugin_ids: list[str] | UnsetType = UNSET


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
    item: ThreadItem | UnsetType = UNSET
    """``item_completed`` (Codex 0.166): the item, its thread and turn, and when it ran."""
    thread_id: str | UnsetType = UNSET
    started_at_ms: int | UnsetType | None = UNSET
    completed_at_ms: int | UnsetType | None = UNSET
    thread_settings: ThreadSettings | UnsetType = UNSET
    """``thread_settings_applied`` (Codex 0.166)."""
    root_turn_id: str | UnsetType = UNSET
    turn_attribution: Any = UNSET


class TokenUsageRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``token_usage_record`` (Codex 0.166): one model response's tokens (``usage``), its
    turn's so far and the session's so far (``thread_token_usage``, what gemwire counts:
    the ``token_count`` after it repeats that total)."""

    usage: TokenUsage
    thread_token_usage: TokenUsage
    turn_token_usage: TokenUsage | UnsetType = UNSET
    response_id: str | UnsetType = UNSET
    thread_id: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    turn_id: str | UnsetType = UNSET
    root_turn_id: str | UnsetType = UNSET


Payload = SessionMeta | TurnContext | ResponseItem | EventMsg | TokenUsageRecord
"""A record's payload, decoded by its record type."""
