"""Scenarios: what the scripted model answers, turn by turn.

A scenario is plain data, written in Python or JSON:

    Scenario(turns=[
        Reply([Text("I'll write the file."),
               FunctionCall("write_file", {"file_path": "hello.txt", "content": "hi\\n"})]),
        Reply([Text("Done.")]),
    ], files={"README.md": "# demo\\n"})

    {"files": {"README.md": "# demo\\n"},
     "turns": [{"type": "reply", "chunks": [{"type": "text", "text": "I'll write the file."},
                                            {"type": "function_call", "name": "write_file",
                                             "args": {"file_path": "hello.txt", "content": "hi\\n"}}]},
               {"type": "reply", "chunks": [{"type": "text", "text": "Done."}]}]}

Each streaming request of the CLI consumes the next turn. A `Reply` streams its chunks as
server-sent events, one event per chunk; the last event carries ``finishReason`` and
``usageMetadata``. A `Fail` answers with a Google API error instead. Side calls (the
model router, next-speaker checks, token counting) are answered by the server and do not
consume turns.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, TypeVar

import msgspec

from gemwire.errors import ScenarioError

__all__ = (
    "MAX_SCENARIO_BYTES",
    "Chunk",
    "Delay",
    "Fail",
    "FunctionCall",
    "FunctionCalls",
    "Hang",
    "Reply",
    "Scenario",
    "Text",
    "Thought",
    "Truncate",
    "Turn",
    "Usage",
    "load_scenario",
    "seed_workspace",
)

MAX_SCENARIO_BYTES = 64 << 20
"""A scenario file larger than this is refused (the largest in tests/ is a few KiB)."""

NonNegative = Annotated[float, msgspec.Meta(ge=0)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Repeat = Annotated[int, msgspec.Meta(ge=1, le=1000)]
T = TypeVar("T")


class Text(msgspec.Struct, frozen=True, tag="text"):
    """A chunk of answer text."""

    text: str


class Thought(msgspec.Struct, frozen=True, tag="thought"):
    """A chunk of reasoning (a part with ``thought: true``).

    Gemini CLI shows the first ``**bold**`` line as the thought's subject.
    """

    text: str


class FunctionCall(msgspec.Struct, frozen=True, tag="function_call"):
    """The model asks the CLI to run a tool. ``id`` becomes part of the CLI's ``tool_id``."""

    name: str
    args: dict[str, Any] = {}
    id: str | None = None


class FunctionCalls(msgspec.Struct, frozen=True, tag="function_calls"):
    """Several function calls in one streamed chunk, as the API sends parallel calls."""

    calls: list[FunctionCall]

    def __post_init__(self) -> None:
        if not self.calls:
            raise ScenarioError("function_calls needs at least one call")


class Delay(msgspec.Struct, frozen=True, tag="delay"):
    """Wait before the next chunk (the connection stays open)."""

    seconds: NonNegative


class Hang(msgspec.Struct, frozen=True, tag="hang"):
    """Stop sending and keep the connection open until the server stops."""


class Truncate(msgspec.Struct, frozen=True, tag="truncate"):
    """Send half of an event and drop the connection: a stream cut mid-flight."""


Chunk = Text | Thought | FunctionCall | FunctionCalls | Delay | Hang | Truncate


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Token counts sent as ``usageMetadata`` on the last chunk of a reply."""

    prompt: Count = 100
    output: Count = 10
    cached: Count = 0
    thoughts: Count = 0

    @property
    def total(self) -> int:
        return self.prompt + self.output + self.thoughts


class Reply(msgspec.Struct, frozen=True, tag="reply"):
    """A successful streamed answer.

    With no content chunks at all the reply is a single event with no parts, which is
    what an empty model response looks like on the wire.
    """

    chunks: list[Chunk] = []
    usage: Usage = Usage()
    finish_reason: str = "STOP"
    repeat: Repeat = 1
    when: str | None = None
    """Serve this turn only to a request whose user messages contain this text (for
    concurrent runs, each with its own answers); turns without it serve any request."""


_STATUS_NAMES = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "Internal error encountered."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}


class Fail(msgspec.Struct, frozen=True, tag="error"):
    """An HTTP error with a Google API error body.

    ``retry_delay`` adds a ``google.rpc.RetryInfo`` detail (seconds); ``quota_id`` adds a
    ``google.rpc.QuotaFailure`` violation, which Gemini CLI reads to tell a per-minute
    (retryable) limit from a per-day (terminal) one.
    """

    status: Annotated[int, msgspec.Meta(ge=400, le=599)]
    message: str | None = None
    retry_delay: NonNegative | None = None
    quota_id: str | None = None
    repeat: Repeat = 1
    when: str | None = None
    """As for `Reply`."""

    def body(self) -> dict[str, Any]:
        status_name, default_message = _STATUS_NAMES.get(self.status, ("UNKNOWN", "Error."))
        error: dict[str, Any] = {
            "code": self.status,
            "message": self.message or default_message,
            "status": status_name,
        }
        details: list[dict[str, Any]] = []
        if self.quota_id is not None:
            details.append(
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/"
                            "generate_content_free_tier_requests",
                            "quotaId": self.quota_id,
                            "quotaValue": "10",
                        }
                    ],
                }
            )
        if self.retry_delay is not None:
            details.append(
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{self.retry_delay:g}s",
                }
            )
        if details:
            error["details"] = details
        return {"error": error}


Turn = Reply | Fail


class Scenario(msgspec.Struct, frozen=True, kw_only=True):
    """What the scripted model answers, and the files the workspace starts with.

    ``api_key``: when set, any request carrying another key is refused the way the real
    API refuses a bad key (HTTP 400, ``API_KEY_INVALID``).
    """

    turns: list[Turn]
    files: dict[str, str] = {}
    api_key: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        for name in self.files:
            _check_workspace_path(name)

    def expanded_turns(self) -> list[Turn]:
        """The turns in the order they are served, with ``repeat`` unrolled."""
        return [turn for turn in self.turns for _ in range(turn.repeat)]


def _check_workspace_path(name: str) -> None:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or "\\" in name:
        raise ScenarioError(f"workspace file {name!r} must be a relative path inside the workspace")


def seed_workspace(workspace: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (relative path -> text) into ``workspace``."""
    for name, content in files.items():
        _check_workspace_path(name)
        target = workspace / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


_decoder = msgspec.json.Decoder(Scenario)


def load_scenario(source: str | bytes | os.PathLike[str]) -> Scenario:
    """Read a scenario from JSON text, bytes, or a path to a ``.json`` file.

    Raises `ScenarioError` naming the problem and where it is, e.g.
    ``scenario.json: Expected `str`, got `int` - at `$.turns[0].chunks[1].text```.
    """
    return decode_scenario(_decoder, source, "scenario")


def decode_scenario(
    decoder: msgspec.json.Decoder[T], source: str | bytes | os.PathLike[str], label: str
) -> T:
    """``source`` (JSON text, bytes, or a path to a file) decoded by ``decoder``; a
    `ScenarioError` that names the path (else ``label``) for anything wrong."""
    if isinstance(source, os.PathLike):
        label = os.fspath(source)
        try:
            found = os.stat(source)
            # A FIFO or a device (/dev/zero) would hang or fill the memory.
            if not stat.S_ISREG(found.st_mode):
                raise ScenarioError("not a regular file", source=label)
            if found.st_size > MAX_SCENARIO_BYTES:
                raise ScenarioError(
                    f"{found.st_size:,} bytes, over {MAX_SCENARIO_BYTES:,}", source=label
                )
            data: str | bytes = Path(source).read_bytes()
        except OSError as exc:
            raise ScenarioError(f"cannot read: {exc.strerror}", source=label) from exc
    else:
        data = source
    try:
        return decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ScenarioError(str(exc), source=label) from exc
    except RecursionError as exc:
        raise ScenarioError("nested too deeply", source=label) from exc
