"""How to run Gemini CLI: `GeminiOptions`, what cannot work together, and the argv.

The prompt is checked here too: it goes on stdin, never in argv, and the CLI reads only
so much of it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from gemwire.errors import InvalidOptions, PromptTooLarge
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners.discovery import GeminiExecutable, version_key

__all__ = (
    "MAX_PROMPT_BYTES",
    "ApprovalMode",
    "GeminiOptions",
    "OutputFormat",
    "build_argv",
    "check_run",
    "named_session",
)

MAX_PROMPT_BYTES = 8 * 1024 * 1024
"""Gemini CLI reads at most 8 MiB from stdin and silently drops the rest."""

ApprovalMode = Literal["default", "auto_edit", "yolo", "plan"]
OutputFormat = Literal["stream-json", "json"]


class GeminiOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How to run Gemini CLI. Every field is optional; the defaults are the CLI's own.

    Flags map one to one onto ``gemini`` flags of the same meaning. ``env`` is added to
    the current environment, or replaces it with ``inherit_env=False``
    (``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY`` and ``GEMINI_CLI_HOME`` work as for
    ``gemini`` itself); ``gemini_home`` sets ``GEMINI_CLI_HOME``. The values of that
    environment under a secret's name (``*_API_KEY``, ``*_TOKEN``, ...) are masked in
    everything the run emits (docs/security.md).
    """

    model: str | None = None
    cwd: str | None = None
    approval_mode: ApprovalMode | None = None
    sandbox: bool = False
    include_directories: tuple[str, ...] = ()
    policy_files: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ()
    """Upstream-deprecated (``--allowed-tools``), still passed on."""
    extensions: tuple[str, ...] = ()
    resume: str | None = None
    """``latest``, a 1-based index, or a session UUID (``--resume``)."""
    session_id: str | None = None
    """Start a new session with this id (``--session-id``)."""
    env: dict[str, str] = {}
    inherit_env: bool = True
    """``False``: ``env`` is the CLI's whole environment, not added to this process's
    (an isolated test home, e.g. ``IsolatedGemini.environ()``, stays isolated)."""
    gemini_home: str | None = None
    executable: str | None = None
    timeout: float | None = None
    """Seconds for the whole run; then it is stopped (error kind ``timeout``)."""
    idle_timeout: float | None = None
    """Seconds without any output on stdout; then it is stopped (``timeout``)."""
    max_tool_calls: int | None = None
    """Stop the run (``cancelled``) when the model starts more tool calls than this."""
    max_model_turns: int | None = None
    """Stop the run (``cancelled``) when the model starts more turns than this. A model
    turn is seen when it writes text or calls a tool after the previous turn's tool
    results (Gemini's own limit, ``model.maxSessionTurns``, counts the whole session)."""
    max_rate_limit_retries: int | None = None
    """Stop the run (``rate_limited``) after this many 429 retries instead of letting the
    CLI back off for minutes. ``None``: let the CLI retry (``general.maxAttempts``)."""
    output_format: OutputFormat = "stream-json"
    """``json`` makes the CLI print one document at the end: the same `RunResult`, but no
    tool-call events, no changed files, and an answer holding only the last model turn's
    text. It cannot be combined with ``idle_timeout`` or the budgets (``max_tool_calls``,
    ``max_model_turns``), which need events as they happen."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """Longer stdout lines (stream-json) or documents (json) are skipped with a notice."""
    follow_session_file: bool = False
    """Also read the session file the CLI writes during the run, for what its output lacks:
    the model's thoughts (``thought_delta``) and each edit's exact change (``file_changed``,
    ``derived: false``), marked ``origin: "session_file"``, and the context figure on
    ``turn_completed`` (see runners/_session_follower.py)."""


def check_run(prompt: bytes, options: GeminiOptions) -> None:
    """Raise `PromptTooLarge` or `InvalidOptions` before anything starts."""
    if len(prompt) > MAX_PROMPT_BYTES:
        raise PromptTooLarge(
            f"the prompt is {len(prompt)} bytes; Gemini CLI reads at most "
            f"{MAX_PROMPT_BYTES} from stdin and would drop the rest silently"
        )
    watched = ("idle_timeout", "max_tool_calls", "max_model_turns")
    if options.output_format == "json" and any(getattr(options, w) is not None for w in watched):
        raise InvalidOptions(
            f"{', '.join(watched)} need output_format='stream-json': "
            "the json format prints nothing until the run is over"
        )
    for name in ("timeout", "idle_timeout"):
        seconds = getattr(options, name)
        if seconds is not None and not seconds > 0:
            raise InvalidOptions(f"{name} must be more than 0 seconds, not {seconds}")
    for name in ("max_tool_calls", "max_model_turns", "max_rate_limit_retries"):
        count = getattr(options, name)
        if count is not None and count < 0:
            raise InvalidOptions(f"{name} must be 0 or more, not {count}")


def named_session(resume: str | None) -> str | None:
    """The session id in a ``--resume`` value (not ``latest``, not an index)."""
    if resume is None or resume == "latest" or resume.isdigit():
        return None
    return resume


def build_argv(executable: GeminiExecutable, options: GeminiOptions) -> list[str]:
    argv = [*executable.argv, "--output-format", options.output_format]
    if options.model:
        argv += ["--model", options.model]
    if options.approval_mode:
        argv += ["--approval-mode", options.approval_mode]
    if options.sandbox:
        argv.append("--sandbox")
    for directory in options.include_directories:
        argv += ["--include-directories", directory]
    for policy in options.policy_files:
        argv += ["--policy", policy]
    if options.allowed_tools:
        argv += ["--allowed-tools", ",".join(options.allowed_tools)]
    for extension in options.extensions:
        argv += ["--extensions", extension]
    if options.resume:
        argv += ["--resume", options.resume]
        if executable.version is not None and version_key(executable.version) < (0, 30, 0):
            # Before 0.30, --resume with a piped stdin and no --prompt is refused ("you must
            # provide a message via --prompt (-p) or stdin"). A blank --prompt satisfies the
            # check; the prompt itself still goes on stdin (the CLI appends "\n\n " to it).
            argv += ["--prompt", " "]
    if options.session_id:
        argv += ["--session-id", options.session_id]
    return argv
