"""Agent scenarios: what the scripted ACP agent (`ScriptedAgent`) does, prompt by prompt.

An agent scenario is plain data, written in Python or JSON, with ACP's own names (camelCase,
as on the wire); what the agent sends is built from the ACP types of `gemwire.wire.acp`:

    {"turns": [{"steps": [
        {"type": "think", "text": "The user wants a file."},
        {"type": "update", "update": {"sessionUpdate": "tool_call", "toolCallId": "w1",
                                      "title": "Write notes.txt", "kind": "edit"}},
        {"type": "request_permission", "toolCall": {"toolCallId": "w1"},
         "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                     {"optionId": "no", "name": "Reject", "kind": "reject_once"}],
         "then": {"yes": [{"type": "write_text_file", "path": "notes.txt", "content": "hi"},
                          {"type": "say", "text": "Written."}],
                  "no": [{"type": "say", "text": "Not written."}]}}]}]}

Each ``session/prompt`` takes the next turn (``repeat`` serves one several times); the agent
does its steps in order, each to the end (a request waits for the client's answer), then
answers the prompt with the turn's ``stopReason``. The steps:

- `Say`, `Think`: a chunk of the answer, of the agent's reasoning.
- `Update`: any ``session/update`` (``tool_call``, ``plan``, ``usage_update``, ...), checked
  against its ACP type when the scenario is read.
- `RequestPermission`: ``session/request_permission``; ``then`` holds the steps for each
  answer, by the chosen ``optionId`` (``"cancelled"``: the client cancelled).
- `ReadTextFile`, `WriteTextFile`: ``fs/read_text_file``, ``fs/write_text_file``.
- `RunCommand`: ``terminal/create``, then ``terminal/wait_for_exit``, ``terminal/output``
  and ``terminal/release`` of that terminal.
- `Sleep`: wait this many seconds; `AwaitCancel`: wait until the client sends
  ``session/cancel``, then answer the prompt ``cancelled`` (never a race with the clock).
- `PromptError`: answer the prompt with this JSON-RPC error instead.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import msgspec

from gemwire.errors import GemwireError, ScenarioError
from gemwire.testing.scenario import decode_scenario
from gemwire.wire import acp
from gemwire.wire.jsonrpc import INTERNAL_ERROR

__all__ = (
    "AgentScenario",
    "AgentTurn",
    "AwaitCancel",
    "PromptError",
    "ReadTextFile",
    "RequestPermission",
    "RunCommand",
    "Say",
    "ScriptedError",
    "Sleep",
    "Step",
    "Think",
    "Update",
    "load_agent_scenario",
    "session_update",
)

NonNegative = Annotated[float, msgspec.Meta(ge=0)]
Repeat = Annotated[int, msgspec.Meta(ge=1, le=1000)]


class ScriptedError(GemwireError):
    """Raised in a `ScriptedAgent`'s handler, and by a `PromptError` step: the request is
    answered with this JSON-RPC error (``code``: -32603, internal error, unless given)."""

    def __init__(self, message: str, *, code: int = INTERNAL_ERROR, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    def error(self) -> dict[str, Any]:
        """The ``error`` member of the answer."""
        error = {"code": self.code, "message": str(self)}
        return error if self.data is None else {**error, "data": self.data}


def session_update(update: dict[str, Any]) -> tuple[str, msgspec.Struct]:
    """A ``session/update``'s ``update`` object (``{"sessionUpdate": kind, ...}``) as its kind
    and its ACP type; `ScenarioError` for an unknown kind or field, or a wrong value."""
    fields = dict(update)
    kind = fields.pop("sessionUpdate", None)
    if kind not in acp.SESSION_UPDATE_TYPES:
        known = ", ".join(acp.SESSION_UPDATE_TYPES)
        raise ScenarioError(f"sessionUpdate {kind!r} is none of ACP's kinds ({known})")
    kind_type = acp.SESSION_UPDATE_TYPES[kind]
    names = {field.encode_name for field in msgspec.structs.fields(kind_type)}
    if unknown := sorted(set(fields) - names):
        raise ScenarioError(f"{kind} has no field {', '.join(map(repr, unknown))}")
    try:
        return kind, msgspec.convert(fields, kind_type)
    except msgspec.ValidationError as exc:
        raise ScenarioError(f"{kind}: {exc}") from exc


class _Step(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    rename="camel",
    tag_field="type",
    forbid_unknown_fields=True,
):
    pass


class Say(_Step, frozen=True, tag="say"):
    """An ``agent_message_chunk`` of text."""

    text: str


class Think(_Step, frozen=True, tag="think"):
    """An ``agent_thought_chunk`` of text."""

    text: str


class Update(_Step, frozen=True, tag="update"):
    """Any ``session/update``: ``update`` is its ``update`` object, as ACP writes it."""

    update: dict[str, Any]

    def __post_init__(self) -> None:
        session_update(self.update)


class RequestPermission(_Step, frozen=True, tag="request_permission"):
    """``session/request_permission`` for ``tool_call``; then the steps of ``then`` under
    the chosen ``optionId``, or ``"cancelled"`` (none there: go on)."""

    tool_call: acp.ToolCallUpdate
    options: list[acp.PermissionOption]
    then: dict[str, list[Step]] = {}


class ReadTextFile(_Step, frozen=True, tag="read_text_file"):
    """``fs/read_text_file``; a relative ``path`` is in the session's folder (ACP sends
    absolute paths)."""

    path: str
    line: int | None = None
    limit: int | None = None


class WriteTextFile(_Step, frozen=True, tag="write_text_file"):
    """``fs/write_text_file``; ``path`` as for `ReadTextFile`."""

    path: str
    content: str


class RunCommand(_Step, frozen=True, tag="run_command"):
    """``command`` in a client terminal, to its end (create, wait for exit, output,
    release); a relative ``cwd`` is in the session's folder."""

    command: str
    args: list[str] = []
    env: list[acp.EnvVariable] = []
    cwd: str | None = None
    output_byte_limit: int | None = None


class Sleep(_Step, frozen=True, tag="sleep"):
    """Wait ``seconds`` (a slow agent, as a client sees one)."""

    seconds: NonNegative


class AwaitCancel(_Step, frozen=True, tag="await_cancel"):
    """Wait for the client's ``session/cancel``; the prompt is then answered
    ``cancelled``."""


class PromptError(_Step, frozen=True, tag="error"):
    """Answer the prompt with this JSON-RPC error (the turn's last step)."""

    code: int
    message: str
    data: Any = None


Step = (
    Say
    | Think
    | Update
    | RequestPermission
    | ReadTextFile
    | WriteTextFile
    | RunCommand
    | Sleep
    | AwaitCancel
    | PromptError
)


class AgentTurn(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    """What the agent does for one prompt, and the prompt's answer."""

    steps: list[Step] = []
    stop_reason: str = "end_turn"
    """``end_turn``, ``max_tokens``, ``max_turn_requests``, ``refusal`` or ``cancelled``."""
    usage: acp.Usage | None = None
    repeat: Repeat = 1


ASKING_MODES = acp.SessionModeState(
    current_mode_id="default",
    available_modes=[
        acp.SessionMode(
            id="default", name="Ask", description="Asks where the scenario asks, as scripted."
        )
    ],
)
"""The scripted agent's modes unless its scenario says otherwise."""


class AgentScenario(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True
):
    """The agent's turns, and what it says of itself in ``initialize``. Without turns, each
    prompt is answered ``end_turn`` at once (a scenario of sessions, not of turns)."""

    turns: list[AgentTurn] = []
    agent_info: acp.Implementation = acp.Implementation(name="scripted", version="1.0")
    agent_capabilities: acp.AgentCapabilities = acp.AgentCapabilities()
    modes: acp.SessionModeState | None = ASKING_MODES
    """What ``session/new`` says of modes, as a real agent does (``session/set_mode``
    switches between them); ``None``: it names none. gemwire knows the agent named
    ``scripted`` asks in ``default`` (`gemwire.runners.acp.asking`): it asks where its
    scenario asks."""
    description: str = ""

    def expanded_turns(self) -> list[AgentTurn]:
        """The turns in the order they are served, with ``repeat`` unrolled."""
        return [turn for turn in self.turns for _ in range(turn.repeat)]


_decoder = msgspec.json.Decoder(AgentScenario)


def load_agent_scenario(source: str | bytes | os.PathLike[str]) -> AgentScenario:
    """Read an agent scenario from JSON text, bytes, or a path to a ``.json`` file.

    Raises `ScenarioError` naming the problem and where it is, e.g.
    ``agent.json: Expected `str`, got `int` - at `$.turns[0].steps[0].text```.
    """
    return decode_scenario(_decoder, source, "agent scenario")
