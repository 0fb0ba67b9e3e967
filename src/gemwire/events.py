"""The normalized event vocabulary: one stream for Gemini's stream-json, ACP and saved sessions.

A public contract. Every event is a frozen Struct serialized as a JSON object whose
``type`` tag names it (``{"type": "message_delta", "agent": "gemini", ...}``); ``--json``
output, golden files and exports all use this shape. New events and fields may be added;
existing names are never changed.

Every event carries ``agent`` (``"gemini"``, ``"acp:<name>"``) and, once known,
``session_id``. Where gemwire *derives* something upstream did not send, the event says
so (``derived``).

    >>> import msgspec
    >>> event = MessageDelta(agent="gemini", session_id="s1", text="Hello")
    >>> msgspec.json.encode(event)
    b'{"type":"message_delta","agent":"gemini","session_id":"s1","text":"Hello"}'
    >>> decode_event(b'{"type":"message_delta","agent":"gemini","session_id":"s1","text":"Hi"}')
    MessageDelta(agent='gemini', session_id='s1', text='Hi')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, get_args

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "ERROR_KINDS",
    "TOOL_KINDS",
    "AgentCost",
    "AuthStatus",
    "Event",
    "FileChanged",
    "Location",
    "MessageDelta",
    "ModelUsage",
    "Notice",
    "PermissionOption",
    "PermissionRequested",
    "PermissionResolved",
    "PlanEntry",
    "PlanRemoved",
    "PlanUpdated",
    "SessionMessage",
    "SessionStarted",
    "SessionUpdated",
    "SubagentUpdated",
    "ThoughtDelta",
    "TokenUsage",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolCallUpdated",
    "ToolError",
    "TurnCompleted",
    "TurnError",
    "Unknown",
    "UsageReported",
    "UserMessage",
    "decode_event",
    "encode_event",
    "encode_events",
    "event_schema",
)

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
TOOL_KINDS: tuple[str, ...] = get_args(ToolKind)
"""ACP's ToolKind values; every tool call gets one (unknown tools: ``other``)."""

ErrorKind = Literal[
    "not_found",
    "auth",
    "untrusted",
    "rate_limited",
    "quota",
    "ineligible",
    "api",
    "input",
    "config",
    "turn_limit",
    "timeout",
    "cancelled",
    "crashed",
    "protocol",
    "agent",
]
ERROR_KINDS: tuple[str, ...] = get_args(ErrorKind)
"""Why a turn failed; see `TurnError`."""

StopReason = Literal["end_turn", "max_turn_requests", "max_tokens", "refusal", "cancelled", "error"]


# gc=False on events and their data: they never form reference cycles (their containers
# hold JSON values), so the collector need not track them; a stream of many thousands of
# events held in batches made it walk all of them again and again.
class _Data(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Plain data inside events (not an event itself)."""


class Location(_Data, frozen=True, kw_only=True):
    """A file a tool call touches (ACP ToolCallLocation)."""

    path: str
    line: int | None = None


class ToolError(_Data, frozen=True, kw_only=True):
    """Why a tool call failed, as upstream typed it (e.g. ``tool_not_registered``)."""

    type: str
    message: str


class ModelUsage(_Data, frozen=True, kw_only=True):
    input_tokens: int
    output_tokens: int
    cached_tokens: int | None = None
    """``None`` where the source does not report cached tokens (Gemini CLI < 0.30)."""
    total_tokens: int


class TokenUsage(_Data, frozen=True, kw_only=True):
    input_tokens: int
    output_tokens: int
    cached_tokens: int | None = None
    total_tokens: int
    by_model: dict[str, ModelUsage] = {}
    cost_usd: float | UnsetType = UNSET
    """An **estimate** (derived) from gemwire's price table, where every model used has a
    price; absent otherwise. See `gemwire.sessions.pricing`."""
    context_tokens: int | UnsetType = UNSET
    """Tokens in the context window at the last model request (its prompt and answer),
    where known; absent otherwise (derived)."""
    context_window: int | UnsetType = UNSET
    """The size of that model's context window, where the price table knows it (derived)."""


class AgentCost(_Data, frozen=True, kw_only=True):
    """What the agent itself said the session cost (ACP's ``usage_update.cost``), as opposed to
    gemwire's estimate (`TokenUsage.cost_usd`)."""

    currency: str
    """As the agent named it (ISO 4217, e.g. ``USD``)."""
    session_total: float
    """The session's cost so far, as last reported in the turn."""
    turn: float | None = None
    """This turn's: the rise of ``session_total`` since the session's previous report on this
    connection (the whole total on a session this connection opened new); ``None`` where
    no earlier figure is known (a loaded or resumed session's first turn)."""


class TurnError(_Data, frozen=True, kw_only=True):
    """Why a turn failed: a kind from `ERROR_KINDS`, upstream's message, and the exit code."""

    kind: ErrorKind | str
    message: str
    exit_code: int | None = None
    retry_delay: float | UnsetType = UNSET
    """Seconds Google asked to wait before retrying (its ``RetryInfo``), or until a quota
    resets where the message says (``quota``); for ``rate_limited`` and ``quota`` only, and
    absent (`UNSET`, and not in the JSON) when none was named."""


class PlanEntry(_Data, frozen=True, kw_only=True):
    content: str
    status: Literal["pending", "in_progress", "completed"] | str
    priority: Literal["high", "medium", "low"] | str | None = None


class PermissionOption(_Data, frozen=True, kw_only=True):
    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"] | str


class _Event(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", repr_omit_defaults=True, gc=False
):
    agent: str
    session_id: str | None = None
    replay: bool | UnsetType = UNSET
    """``True`` on events an ACP agent replayed from a loaded session's history (absent
    otherwise, and then not in the JSON either)."""
    parent_call_id: str | UnsetType = UNSET
    """On a subagent's events: the ``call_id`` of the parent session's tool call that ran
    it (Gemini's ``invoke_agent``). Absent otherwise."""
    origin: Literal["session_file", "message_text"] | UnsetType = UNSET
    """``session_file`` on the events of a live run that gemwire read from the session file
    the CLI was writing (``follow_session_file``), not from its output; ``message_text`` on
    an event gemwire read from an in-band marker in the agent's message text (Gemini CLI's
    ``[MODE_UPDATE] <mode>``), which is then not answer text. Absent otherwise."""

    @property
    def type(self) -> str:
        """The event's ``type`` tag, e.g. ``"message_delta"`` (same as in its JSON)."""
        tag = self.__struct_config__.tag
        assert isinstance(tag, str)
        return tag


class SessionStarted(_Event, tag="session_started", frozen=True, kw_only=True):
    """The agent announced a session. ``model`` is what was requested (e.g. ``auto``)."""

    model: str | None = None
    cwd: str | None = None
    agent_version: str | None = None


class UserMessage(_Event, tag="user_message", frozen=True, kw_only=True):
    """The prompt, as the agent echoed or recorded it."""

    text: str


class MessageDelta(_Event, tag="message_delta", frozen=True, kw_only=True):
    """A chunk of the assistant's answer text."""

    text: str


class ThoughtDelta(_Event, tag="thought_delta", frozen=True, kw_only=True):
    """A chunk of the assistant's reasoning, where the source has it."""

    text: str


class ToolCallStarted(_Event, tag="tool_call_started", frozen=True, kw_only=True):
    """The agent started a tool call.

    ``name`` is the raw upstream tool name; ``kind`` comes from an exact allowlist of
    the agent's built-in tools (anything else is ``other``). MCP tools also name their
    server and tool (``mcp_server``, ``mcp_tool``).
    """

    call_id: str
    name: str
    kind: ToolKind | str
    title: str
    input: dict[str, Any] = {}
    locations: list[Location] = []
    mcp_server: str | None = None
    mcp_tool: str | None = None


class ToolCallUpdated(_Event, tag="tool_call_updated", frozen=True, kw_only=True):
    """Progress of a tool call (ACP), e.g. its status or content so far."""

    call_id: str
    status: Literal["pending", "in_progress"] | str
    content: str | None = None


class ToolCallFinished(_Event, tag="tool_call_finished", frozen=True, kw_only=True):
    """A tool call ended: ``completed``, ``failed`` or ``cancelled``.

    ``diff`` is a unified diff recognized in the output (derived).
    """

    call_id: str
    status: Literal["completed", "failed", "cancelled"]
    output: str | None = None
    error: ToolError | None = None
    diff: str | None = None


class FileChanged(_Event, tag="file_changed", frozen=True, kw_only=True):
    """A file was changed by a tool call.

    ``change`` is ``written`` when the source cannot tell created from modified (Gemini's
    stream-json reports a successful ``write_file`` the same way in both cases).
    ``derived`` is true when gemwire inferred the change from a tool call rather than
    reading it from the source (session files record it; the live stream does not).
    """

    path: str
    change: Literal["created", "modified", "deleted", "written"]
    call_id: str | None = None
    derived: bool


class PlanUpdated(_Event, tag="plan_updated", frozen=True, kw_only=True):
    """The agent's plan, whole. ACP's plans by id (the unstable ``plan_update``) add
    ``plan_id``, and a plan given as Markdown (``markdown``) or as a file (``uri``) instead
    of entries has ``entries: []``; each is absent where it does not apply."""

    entries: list[PlanEntry]
    plan_id: str | UnsetType = UNSET
    markdown: str | UnsetType = UNSET
    uri: str | UnsetType = UNSET


class PlanRemoved(_Event, tag="plan_removed", frozen=True, kw_only=True):
    """The plan ``plan_id`` is gone (ACP's unstable ``plan_removed``)."""

    plan_id: str


class SubagentUpdated(_Event, tag="subagent_updated", frozen=True, kw_only=True):
    """The session owns a subagent's session, ``child_session_id`` (ACP's unstable
    ``subagent_update``). A patch, as sent: an absent field is unchanged, ``null`` cleared.
    ``state`` is ``running``, ``idle``, ``requires_action``, ``unknown`` (or newer);
    ``stop_reason`` and ``usage`` come with ``idle`` where the agent reports them."""

    child_session_id: str
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    state: str | UnsetType | None = UNSET
    stop_reason: str | UnsetType | None = UNSET
    usage: TokenUsage | UnsetType = UNSET


class SessionMessage(_Event, tag="session_message", frozen=True, kw_only=True):
    """A message between sessions, a parent and its subagent (ACP's unstable
    ``session_message`` and ``session_message_chunk``), by ``message_id``. ``delta``: the
    ``text`` continues the message (a chunk); otherwise it is the whole text so far, or
    ``None`` for unchanged. Content that is not text is named in brackets (``[image/png]``)."""

    message_id: str
    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    text: str | None = None
    delta: bool = False


class AuthStatus(_Event, tag="auth_status", frozen=True, kw_only=True):
    """Whose credentials the agent runs on, as it reports them (its ``_auth/status_update``
    extension: Claude's and Codex's adapters). ``kind``: ``account``, ``api_key``,
    ``gateway``, ``external``, ``none`` (logged out) or newer; ``label`` and ``detail`` are
    for a person. The agent's, not a session's: ``session_id`` names the session it came
    during, if any."""

    kind: str
    label: str | None = None
    detail: str | None = None


class PermissionRequested(_Event, tag="permission_requested", frozen=True, kw_only=True):
    """The agent asks before running a tool call. What the call is, as known when it asks
    (ACP's request carries the call), so that the question can be shown whole: ``title``
    and ``kind`` as `ToolCallStarted` has them, ``diff`` the proposed change as a unified
    diff (as `ToolCallFinished.diff`), ``content`` the call's text content. ``None`` where
    the agent gave none (and in sources that do not ask)."""

    request_id: str
    call_id: str | None = None
    options: list[PermissionOption]
    title: str | None = None
    kind: ToolKind | str | None = None
    diff: str | None = None
    content: str | None = None


class PermissionResolved(_Event, tag="permission_resolved", frozen=True, kw_only=True):
    """``option_id`` is ``None`` when the request was cancelled."""

    request_id: str
    call_id: str | None = None
    option_id: str | None = None
    outcome: Literal["denied_no_client"] | UnsetType = UNSET
    """``denied_no_client`` when ``gemwire serve`` denied the request itself because no
    client answered it (none followed the session, none answered in time, or the last one
    left): no person chose that. Absent otherwise (and then not in the JSON either)."""


class UsageReported(_Event, tag="usage", frozen=True, kw_only=True):
    """Token counts so far (per turn or per message, depending on the source)."""

    usage: TokenUsage


class Notice(_Event, tag="notice", frozen=True, kw_only=True):
    """Something worth telling a person that does not end the turn.

    ``source``: ``upstream`` (the agent said it, e.g. Gemini's ``error`` events),
    ``stderr`` (read from the agent's stderr, e.g. retry lines) or ``gemwire`` (gemwire
    noticed it, e.g. an oversized line or invalid UTF-8).
    """

    severity: Literal["info", "warning", "error"]
    message: str
    source: Literal["upstream", "stderr", "gemwire"]


class TurnCompleted(_Event, tag="turn_completed", frozen=True, kw_only=True):
    """The turn ended. Exactly one per turn, whatever happened.

    ``answer`` is all assistant text of the turn, in order, with a blank line before text
    that resumes after tool calls (Gemini's own json output keeps only the last model
    turn's text; this does not).
    """

    ok: bool
    stop_reason: StopReason | str
    error: TurnError | None = None
    answer: str
    usage: TokenUsage | None = None
    duration_ms: int | None = None
    agent_cost: AgentCost | UnsetType = UNSET
    """The cost as the agent reports it, where it does (ACP ``usage_update``); gemwire's own
    estimate is ``usage.cost_usd``. Absent otherwise."""


class SessionUpdated(_Event, tag="session_updated", frozen=True, kw_only=True):
    """Session state an ACP agent announced: ``update`` is its ``sessionUpdate`` kind
    (``current_mode_update``, ``available_commands_update``, ``config_option_update``,
    ``session_info_update``, ``usage_update``, and the unstable ``compaction_update`` and
    ``compaction_summary_chunk``) and ``data`` its fields as sent."""

    update: str
    data: dict[str, Any]


class Unknown(_Event, tag="unknown", frozen=True, kw_only=True):
    """An upstream message gemwire does not know yet, kept raw rather than dropped."""

    upstream_type: str | None = None
    raw: str


Event = (
    SessionStarted
    | UserMessage
    | MessageDelta
    | ThoughtDelta
    | ToolCallStarted
    | ToolCallUpdated
    | ToolCallFinished
    | FileChanged
    | PlanUpdated
    | PlanRemoved
    | SubagentUpdated
    | SessionMessage
    | AuthStatus
    | PermissionRequested
    | PermissionResolved
    | UsageReported
    | Notice
    | TurnCompleted
    | SessionUpdated
    | Unknown
)

_encoder = msgspec.json.Encoder()
_decoder: msgspec.json.Decoder[Event] = msgspec.json.Decoder(Event)


def encode_event(event: Event) -> bytes:
    """One event as a JSON line (with the trailing newline)."""
    return _encoder.encode(event) + b"\n"


def encode_events(events: Iterable[Event]) -> bytes:
    """Events as JSON lines, each with its trailing newline: `encode_event` for each, joined."""
    return _encoder.encode_lines(events)


def decode_event(data: bytes | str) -> Event:
    """Read one event back from its JSON form."""
    return _decoder.decode(data)


def event_schema() -> dict[str, Any]:
    """The JSON Schema of `Event`, as published in docs/events.schema.json."""
    return msgspec.json.schema(Event)
