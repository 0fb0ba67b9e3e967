"""How to run Gemini CLI: `GeminiOptions`, and the argv they make (what is wrong with them
is `runners.gemini_checks`).

The prompt goes on stdin, never in argv; a value is never read as a flag of its own.
"""

from __future__ import annotations

from typing import Literal

import msgspec

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
    """Admin policy files or folders (``--admin-policy``; relative to ``cwd``): rules at the
    admin tier, which user and workspace policies cannot override. One that is not there is
    refused (the CLI would run without it)."""
    allowed_tools: tuple[str, ...] = ()
    """Upstream-deprecated (``--allowed-tools``), still passed on."""
    extensions: tuple[str, ...] = ()
    resume: str | None = None
    """``latest``, a 1-based index, or a session UUID (``--resume``)."""
    session_id: str | None = None
    """Start a new session with this id (``--session-id``)."""
    session_file: str | None = None
    """Continue the session saved in this file (``--session-file``; a ``session-*.jsonl`` the
    CLI wrote, copied anywhere; relative to ``cwd``)."""
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
    of its own that links to the user's (runners/_gemini_home.py). Gemini CLI 0.25 or newer."""
    system_prompt_file: str | None = None
    """Use this file's text as the system prompt in place of Gemini CLI's built-in one
    (``GEMINI_SYSTEM_MD``; relative to ``cwd``). The CLI still substitutes its
    ``${...}`` variables and appends the ``GEMINI.md`` context."""
    extra_args: tuple[str, ...] = ()
    """More ``gemini`` flags, passed on as given after gemwire's own. Refused: the prompt,
    flags gemwire owns (the output format, the session to open, ``--acp``, ...) in any
    spelling Gemini CLI's parser reads, and a bare word that is not the value of the flag
    before it (`runners.gemini_checks`)."""
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


def named_session(resume: str | None) -> str | None:
    """The session id in a ``--resume`` value (not ``latest``, not an index)."""
    if resume is None or resume == "latest" or resume.isdigit():
        return None
    return resume


def build_argv(executable: GeminiExecutable, options: GeminiOptions) -> list[str]:
    argv = [*executable.argv, "--output-format", options.output_format]
    if options.model:
        argv += _valued("--model", options.model)
    if options.approval_mode:
        argv += ["--approval-mode", options.approval_mode]
    if options.sandbox:
        argv.append("--sandbox")
    for directory in options.include_directories:
        argv += _valued("--include-directories", directory)
    for policy in options.policy_files:
        argv += _valued("--policy", policy)
    for policy in options.admin_policy_files:
        argv += _valued("--admin-policy", policy)
    for server in options.allowed_mcp_server_names:
        argv += _valued("--allowed-mcp-server-names", server)
    if options.skip_trust:
        argv.append("--skip-trust")
    if options.worktree is not None:
        argv += _valued("--worktree", options.worktree) if options.worktree else ["--worktree"]
    if options.raw_output:
        argv += ["--raw-output", "--accept-raw-output-risk"]
    if options.allowed_tools:
        argv += _valued("--allowed-tools", ",".join(options.allowed_tools))
    for extension in options.extensions:
        argv += _valued("--extensions", extension)
    if options.resume:
        argv += _valued("--resume", options.resume)
        if executable.version is not None and version_key(executable.version) < (0, 30, 0):
            # Before 0.30, --resume with a piped stdin and no --prompt is refused ("you must
            # provide a message via --prompt (-p) or stdin"). A blank --prompt satisfies the
            # check; the prompt itself still goes on stdin (the CLI appends "\n\n " to it).
            argv += ["--prompt", " "]
    if options.session_id:
        argv += _valued("--session-id", options.session_id)
    if options.session_file:
        argv += _valued("--session-file", options.session_file)
    return [*argv, *options.extra_args]


def _valued(flag: str, value: str) -> list[str]:
    """``flag value``; ``flag=value`` when yargs would read the value as a flag of its own
    (``--model -p`` is ``--model`` without a value, then ``-p``).

    >>> _valued("--policy", "p.toml"), _valued("--worktree", "-p")
    (['--policy', 'p.toml'], ['--worktree=-p'])
    """
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]
