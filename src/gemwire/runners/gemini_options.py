"""How to run Gemini CLI: `GeminiOptions`, what cannot work together, and the argv.

The prompt is checked here too: it goes on stdin, never in argv, and the CLI reads only
so much of it. So are ``extra_args``, the flags gemwire has no field for: never the
prompt, never the output format (gemwire owns both), never a flag that makes the CLI do
something other than one headless run.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from gemwire.errors import InvalidOptions, PromptTooLarge
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners.discovery import GeminiExecutable, version_key
from gemwire.wire import acp

__all__ = (
    "MAX_PROMPT_BYTES",
    "ApprovalMode",
    "GeminiOptions",
    "McpServer",
    "OutputFormat",
    "build_argv",
    "check_extra_args",
    "check_run",
    "named_session",
)

MAX_PROMPT_BYTES = 8 * 1024 * 1024
"""Gemini CLI reads at most 8 MiB from stdin and silently drops the rest."""

ApprovalMode = Literal["default", "auto_edit", "yolo", "plan"]
OutputFormat = Literal["stream-json", "json"]
McpServer = acp.McpServerStdio | acp.McpServerHttp | acp.McpServerSse
"""An MCP server, as ACP's ``session/new`` names one (`AcpOptions.mcp_servers` takes the same)."""


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
    admin_policy_files: tuple[str, ...] = ()
    """Admin policy files or folders (``--admin-policy``): rules at the admin tier, which
    user and workspace policies cannot override."""
    allowed_tools: tuple[str, ...] = ()
    """Upstream-deprecated (``--allowed-tools``), still passed on."""
    extensions: tuple[str, ...] = ()
    resume: str | None = None
    """``latest``, a 1-based index, or a session UUID (``--resume``)."""
    session_id: str | None = None
    """Start a new session with this id (``--session-id``)."""
    session_file: str | None = None
    """Continue the session saved in this JSON file (``--session-file``), wherever it is."""
    skip_trust: bool = False
    """Trust the workspace for this run (``--skip-trust``): a folder the user has not trusted
    otherwise runs with its settings, extensions and MCP servers ignored."""
    allowed_mcp_server_names: tuple[str, ...] = ()
    """Only these configured MCP servers are started (``--allowed-mcp-server-names``)."""
    worktree: str | None = None
    """Run in a new git worktree of the workspace (``--worktree``) with this name; ``""``:
    a generated one. The run's files change there, not in ``cwd``. Gemini CLI 0.61.0 takes
    it only with ``experimental.worktrees`` on in its settings."""
    raw_output: bool = False
    """Let the model's text through unsanitized, ANSI escapes included (``--raw-output``,
    with ``--accept-raw-output-risk``: gemwire's events are data, and its own terminal
    output makes every text safe to show)."""
    mcp_servers: tuple[McpServer, ...] = ()
    """MCP servers for this run, added to those of the user's settings (a server of the same
    name is replaced), without writing the user's ``settings.json``: the CLI runs with a home
    of its own that links to the user's (runners/_gemini_home.py). Gemini CLI 0.30 or newer."""
    system_prompt_file: str | None = None
    """Use this file's text as the system prompt in place of Gemini CLI's built-in one
    (``GEMINI_SYSTEM_MD``; relative to ``cwd``). The CLI still substitutes its
    ``${...}`` variables and appends the ``GEMINI.md`` context."""
    extra_args: tuple[str, ...] = ()
    """More ``gemini`` flags, passed on as given after gemwire's own (`check_extra_args`
    says which are refused)."""
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
    opened = [n for n in ("resume", "session_id", "session_file") if getattr(options, n)]
    if len(opened) > 1:
        raise InvalidOptions(f"{' and '.join(opened)}: give one session to open")
    check_extra_args(options.extra_args)


def _flag(name: str) -> str:
    """A long flag's name as yargs matches it (``--outputFormat`` is ``--output-format``)."""
    name = name.lower().replace("_", "").replace("-", "")
    return name[2:] if name.startswith("no") and name[2:] in _OWNED else name


_OWNED = {
    "prompt": "the prompt goes on stdin",
    "promptinteractive": "the prompt goes on stdin, and a run is headless",
    "outputformat": "gemwire chooses the output format (output_format)",
    "acp": "an ACP agent runs through gemwire's ACP client (gemwire acp)",
    "experimentalacp": "an ACP agent runs through gemwire's ACP client (gemwire acp)",
    "help": "it prints the help instead of running",
    "version": "it prints the version instead of running",
    "listextensions": "it lists extensions instead of running",
    "listsessions": "it lists sessions instead of running (gemwire sessions list)",
    "deletesession": "it deletes a session instead of running",
}
"""Long flags ``extra_args`` may not hold, and why."""

_SHORT = {
    "p": "prompt",
    "i": "promptinteractive",
    "o": "outputformat",
    "h": "help",
    "v": "version",
    "l": "listextensions",
}

_TAKES_VALUE = {
    "model",
    "worktree",
    "approvalmode",
    "policy",
    "adminpolicy",
    "allowedmcpservernames",
    "allowedtools",
    "extensions",
    "resume",
    "sessionfile",
    "sessionid",
    "includedirectories",
}
"""Gemini CLI 0.61.0's flags a bare word may follow as their value."""

_SHORT_TAKES_VALUE = {"m": "model", "w": "worktree", "e": "extensions", "r": "resume"}


def check_extra_args(args: tuple[str, ...]) -> None:
    """Raise `InvalidOptions` for an extra argument gemwire cannot pass on: a flag gemwire
    owns or one that stops the run (`_OWNED`), a bare word that is not the value of the
    flag before it (it would be read as the prompt), ``--``, or a cluster of short flags.

    >>> check_extra_args(("--skip-trust", "--model", "flash", "--policy=p.toml"))
    >>> check_extra_args(("--outputFormat=json",))
    Traceback (most recent call last):
    ...
    gemwire.errors.InvalidOptions: extra_args: --outputFormat=json is not allowed: gemwire chooses the output format (output_format)
    >>> check_extra_args(("--debug", "say hi"))
    Traceback (most recent call last):
    ...
    gemwire.errors.InvalidOptions: extra_args: 'say hi' is not the value of a flag (a bare word is the prompt to Gemini CLI); write --flag=value
    """
    value_may_follow = False
    for arg in args:
        if arg == "--":
            raise InvalidOptions("extra_args: -- is not allowed: what follows it is the prompt")
        if arg.startswith("--"):
            name, has_value, _ = arg[2:].partition("=")
            flag = _flag(name)
            value_may_follow = flag in _TAKES_VALUE and not has_value
        elif arg.startswith("-") and len(arg) > 1:
            if len(arg) != 2:
                raise InvalidOptions(
                    f"extra_args: {arg!r} is ambiguous: write each short flag apart, and a "
                    "value as the next argument or --flag=value"
                )
            flag = _SHORT.get(arg[1], "")
            value_may_follow = arg[1] in _SHORT_TAKES_VALUE
        else:
            if not value_may_follow:
                raise InvalidOptions(
                    f"extra_args: {arg!r} is not the value of a flag (a bare word is the "
                    "prompt to Gemini CLI); write --flag=value"
                )
            value_may_follow = False
            continue
        if flag in _OWNED:
            raise InvalidOptions(f"extra_args: {arg} is not allowed: {_OWNED[flag]}")


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
    for policy in options.admin_policy_files:
        argv += ["--admin-policy", policy]
    for server in options.allowed_mcp_server_names:
        argv += ["--allowed-mcp-server-names", server]
    if options.skip_trust:
        argv.append("--skip-trust")
    if options.worktree is not None:
        argv += ["--worktree", options.worktree] if options.worktree else ["--worktree"]
    if options.raw_output:
        argv += ["--raw-output", "--accept-raw-output-risk"]
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
    if options.session_file:
        argv += ["--session-file", options.session_file]
    return [*argv, *options.extra_args]
