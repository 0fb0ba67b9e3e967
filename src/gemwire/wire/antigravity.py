"""Antigravity's messages, exactly as upstream names them (google-antigravity 0.1.22).

Two shapes, both as the SDK or its bundled ``localharness`` gives them:

- `Step` and `ToolCall`: one frame of a conversation's trajectory, as the SDK's
  ``Conversation.receive_steps()`` yields it (``types.Step``, dumped with
  ``model_dump(mode="json")``). A step is sent again each time it changes: ``content_delta``
  and ``thinking_delta`` are what was added since, ``status`` goes ``ACTIVE`` → ``DONE`` (or
  ``ERROR``, ``CANCELED``), and a tool call's ``args`` gain its result (``diff_block``,
  ``exit_code``, ``combined_output``) when it is done.
- `TranscriptRecord`: one line of the transcript the harness keeps per conversation, in
  ``<app_data_dir>/brain/<id>/.system_generated/logs/transcript.jsonl``. Its tool calls'
  ``args`` are the model's arguments, each value JSON-encoded again (``"\\"a.txt\\""``).

Unknown fields are ignored and every field has a default, so a newer harness still decodes.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = (
    "UPSTREAM_VERSION",
    "Step",
    "ToolCall",
    "TranscriptRecord",
    "TranscriptToolCall",
    "UsageMetadata",
)

UPSTREAM_VERSION = "google-antigravity 0.1.22"


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """``types.ToolCall``: ``name`` is the SDK's (``edit_file`` for the model's
    ``write_to_file``), ``id`` the step's."""

    name: str
    args: dict[str, Any] = {}
    id: str | None = None
    step_id: str | None = None
    canonical_path: str | None = None
    server_name: str | None = None


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """``types.Step``: one action of the trajectory, sent again as it changes."""

    id: str = ""
    step_index: int = 0
    trajectory_id: str = ""
    parent_trajectory_id: str = ""
    depth: int = 0
    type: str = "UNKNOWN"
    """``TEXT_RESPONSE``, ``TOOL_CALL``, ``SYSTEM_MESSAGE``, ``COMPACTION``, ``FINISH``,
    ``THINKING``, ``UNKNOWN``."""
    source: str = "UNKNOWN"
    """``SYSTEM``, ``USER``, ``MODEL``, ``UNKNOWN``."""
    target: str = "UNKNOWN"
    status: str = "UNKNOWN"
    """``ACTIVE``, ``DONE``, ``WAITING_FOR_USER``, ``ERROR``, ``CANCELED``, ``UNKNOWN``."""
    content: str = ""
    content_delta: str = ""
    thinking: str = ""
    thinking_delta: str = ""
    tool_calls: list[ToolCall] = []
    error: str = ""
    is_complete_response: bool | None = None


class UsageMetadata(msgspec.Struct, frozen=True, kw_only=True):
    """``types.UsageMetadata``: a conversation's tokens so far (``None``: not reported)."""

    prompt_token_count: int | None = None
    cached_content_token_count: int | None = None
    candidates_token_count: int | None = None
    thoughts_token_count: int | None = None
    total_token_count: int | None = None


class TranscriptToolCall(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    """The model's name for the tool (``write_to_file``, ``run_command``, …)."""
    args: dict[str, Any] = {}
    """Each argument JSON-encoded again in ``transcript.jsonl`` (as is in
    ``transcript_full.jsonl``)."""


class TranscriptRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One line of ``transcript.jsonl``."""

    step_index: int = 0
    source: str = ""
    """``USER_EXPLICIT``, ``MODEL``, ``SYSTEM``, …"""
    type: str = ""
    """``USER_INPUT``, ``PLANNER_RESPONSE`` (a model response), ``CODE_ACTION``,
    ``RUN_COMMAND``, ``VIEW_FILE``, … (a tool's result), ``ERROR_MESSAGE``, …"""
    status: str = ""
    """``DONE``, ``ERROR`` (a denied or failed call: ``error`` says why), …"""
    created_at: str = ""
    content: str = ""
    thinking: str = ""
    error: str = ""
    exit_code: int | None = None
    """A ``RUN_COMMAND``'s."""
    tool_calls: list[TranscriptToolCall] = []
    input_tokens: int | None = None
    cache_read_tokens: int | None = None
    output_tokens: int | None = None
