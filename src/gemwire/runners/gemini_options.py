"""How to run Gemini CLI: `GeminiOptions`, what is wrong with them, and the argv.

Everything is checked before the run starts (`option_problem`): the prompt (it goes on stdin,
never in argv, and the CLI reads only so much of it), each field's type and value, paths the
CLI would skip silently, options that cannot work together, the Gemini CLI version an option
needs (`REQUIREMENTS`), and ``extra_args``, the flags gemwire has no field for: never the
prompt, never a flag gemwire owns (`runners._gemini_args`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import msgspec

from gemwire.errors import InvalidOptions, PromptTooLarge
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners._gemini_args import refusal
from gemwire.runners.discovery import GeminiExecutable, version_key
from gemwire.wire import acp

__all__ = (
    "MAX_PROMPT_BYTES",
    "REQUIREMENTS",
    "ApprovalMode",
    "GeminiOptions",
    "McpServer",
    "OptionProblem",
    "OutputFormat",
    "Requirement",
    "build_argv",
    "check_extra_args",
    "check_run",
    "check_version",
    "named_session",
    "option_problem",
    "version_problem",
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
    before it (`runners._gemini_args`)."""
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


class OptionProblem(msgspec.Struct, frozen=True, kw_only=True):
    """What is wrong with some of a run's options, in words that name none of them: each
    surface names them its own way (`message` as `GeminiOptions` fields, ``gemwire run`` as
    its flags).

    >>> OptionProblem(options=("resume", "session_file"), problem="give one session").message()
    'resume and session_file: give one session'
    """

    options: tuple[str, ...]
    """The `GeminiOptions` fields at fault."""
    problem: str
    instead: str | None = None
    """The field that does what was asked for."""

    def message(self, name: Callable[[str], str] = str) -> str:
        """The problem, each option called what ``name`` calls it (default: its field)."""
        text = f"{' and '.join(map(name, self.options))}: {self.problem}"
        return text if self.instead is None else f"{text}; use {name(self.instead)}"


class Requirement(msgspec.Struct, frozen=True, kw_only=True):
    """An option that needs a Gemini CLI newer than the oldest gemwire supports."""

    option: str
    """The `GeminiOptions` field."""
    needs: str
    """What of Gemini CLI it uses: a flag, a value of one, a variable."""
    since: str
    """The first release that has it."""
    value: str | None = None
    """Only this value of the option needs it (else any but the default)."""

    def used_by(self, options: GeminiOptions) -> bool:
        value = getattr(options, self.option)
        return value == self.value if self.value is not None else value not in (None, False, ())


REQUIREMENTS = (
    Requirement(option="approval_mode", value="plan", needs="--approval-mode plan", since="0.26.0"),
    Requirement(option="raw_output", needs="--raw-output", since="0.27.0"),
    Requirement(option="mcp_servers", needs="GEMINI_CLI_HOME", since="0.25.0"),
    Requirement(option="policy_files", needs="--policy", since="0.30.0"),
    Requirement(option="admin_policy_files", needs="--admin-policy", since="0.35.0"),
    Requirement(option="worktree", needs="--worktree", since="0.36.0"),
    Requirement(option="skip_trust", needs="--skip-trust", since="0.39.1"),
    Requirement(option="session_id", needs="--session-id", since="0.41.0"),
    Requirement(option="session_file", needs="--session-file", since="0.43.0"),
)
"""Where options meet Gemini CLI versions: the release each first appeared in upstream (its
flags in packages/cli/src/config/config.ts, ``GEMINI_CLI_HOME`` in packages/core, at each
release tag). Everything else gemwire passes is in 0.15.4, the oldest it supports.
tests/e2e/test_gemini_versions.py checks the flags against each pinned CLI's ``--help``."""


def check_run(prompt: bytes, options: GeminiOptions) -> None:
    """Raise `PromptTooLarge` or `InvalidOptions` (`option_problem`) before anything starts."""
    if len(prompt) > MAX_PROMPT_BYTES:
        raise PromptTooLarge(
            f"the prompt is {len(prompt)} bytes; Gemini CLI reads at most "
            f"{MAX_PROMPT_BYTES} from stdin and would drop the rest silently"
        )
    problem = option_problem(options)
    if problem is not None:
        raise InvalidOptions(problem.message())


def check_version(options: GeminiOptions, version: str | None) -> None:
    """Raise `InvalidOptions` for an option Gemini CLI ``version`` lacks (`REQUIREMENTS`);
    an unknown version (``None``) lacks nothing."""
    problem = version_problem(options, version) if version is not None else None
    if problem is not None:
        raise InvalidOptions(problem.message())


def option_problem(options: GeminiOptions, version: str | None = None) -> OptionProblem | None:
    """The first thing wrong with ``options`` (and, given ``version``, what a Gemini CLI of
    that version lacks of them), or ``None``. Paths are relative to ``options.cwd``."""
    return (
        _type_problem(options)
        or _value_problem(options)
        or _path_problem(options)
        or _extra_args_problem(options.extra_args)
        or (version_problem(options, version) if version is not None else None)
    )


def version_problem(options: GeminiOptions, version: str) -> OptionProblem | None:
    """The first option of ``options`` that Gemini CLI ``version`` lacks (`REQUIREMENTS`).

    >>> version_problem(GeminiOptions(skip_trust=True), "0.30.0").message()
    'skip_trust: Gemini CLI 0.30.0 has no --skip-trust (it came in 0.39.1)'
    """
    for requirement in REQUIREMENTS:
        if requirement.used_by(options) and version_key(version) < version_key(requirement.since):
            return OptionProblem(
                options=(requirement.option,),
                problem=f"Gemini CLI {version} has no {requirement.needs} "
                f"(it came in {requirement.since})",
            )
    return None


def check_extra_args(args: tuple[str, ...]) -> None:
    """Raise `InvalidOptions` for an extra argument gemwire cannot pass on (`refusal` says
    which: a flag gemwire owns, in any spelling Gemini CLI's parser reads, or anything it
    would read as the prompt).

    >>> check_extra_args(("--skip-trust", "--model", "flash", "--policy=p.toml"))
    >>> check_extra_args(("--outputFormat=json",))
    Traceback (most recent call last):
    ...
    gemwire.errors.InvalidOptions: extra_args: '--outputFormat=json' is not allowed: gemwire chooses the output format; use output_format
    """
    problem = _extra_args_problem(args)
    if problem is not None:
        raise InvalidOptions(problem.message())


_TEXTS = tuple[str, ...]


def _type_problem(options: GeminiOptions) -> OptionProblem | None:
    """A field of the wrong type: `GeminiOptions` does not check them when it is made."""
    for field in msgspec.structs.fields(GeminiOptions):
        value = getattr(options, field.name)
        if field.name == "mcp_servers":
            if isinstance(value, (tuple, list)) and all(isinstance(s, McpServer) for s in value):
                continue
            problem = "takes a tuple of McpServerStdio, McpServerHttp or McpServerSse"
        elif field.type == _TEXTS and isinstance(value, str):
            problem = f"takes a tuple of strings, not one string: write ({value!r},)"
        else:
            try:
                msgspec.convert(value, field.type, strict=True)
            except msgspec.ValidationError as exc:
                problem = f"{exc}, not {value!r}"
            else:
                continue
        return OptionProblem(options=(field.name,), problem=problem)
    return None


def _value_problem(options: GeminiOptions) -> OptionProblem | None:
    watched = [
        w
        for w in ("idle_timeout", "max_tool_calls", "max_model_turns")
        if getattr(options, w) is not None
    ]
    if options.output_format == "json" and watched:
        return OptionProblem(
            options=(*watched, "output_format"),
            problem="cannot work together: the json format prints nothing until the run is over",
        )
    for name in ("timeout", "idle_timeout"):
        seconds = getattr(options, name)
        if seconds is not None and not seconds > 0:
            return OptionProblem(
                options=(name,), problem=f"must be more than 0 seconds, not {seconds}"
            )
    for name in ("max_tool_calls", "max_model_turns", "max_rate_limit_retries"):
        count = getattr(options, name)
        if count is not None and count < 0:
            return OptionProblem(options=(name,), problem=f"must be 0 or more, not {count}")
    for field in msgspec.structs.fields(GeminiOptions):
        value = getattr(options, field.name)
        texts = [value] if isinstance(value, str) else value if field.type == _TEXTS else ()
        if field.name == "env":
            texts = [*value, *value.values()]
        if field.name != "extra_args" and any("\x00" in text for text in texts):
            return OptionProblem(
                options=(field.name,), problem="holds a NUL byte, which no program can be given"
            )
    opened = tuple(
        n for n in ("resume", "session_id", "session_file") if getattr(options, n) is not None
    )
    if len(opened) > 1:
        return OptionProblem(options=opened, problem="give one session to open")
    if options.resume is not None and not options.resume.strip():
        return OptionProblem(
            options=("resume",), problem="is empty: give latest, an index or a session id"
        )
    if options.session_id is not None and not _SESSION_ID.fullmatch(options.session_id):
        return OptionProblem(
            options=("session_id",),
            problem=f"Gemini CLI takes only letters, digits, - and _ in one, not {options.session_id!r}",
        )
    if options.worktree and _NOT_A_BRANCH.search(options.worktree):
        return OptionProblem(
            options=("worktree",),
            problem=f"{options.worktree!r} cannot be in a git branch name "
            f"(Gemini CLI makes the branch worktree-<name>)",
        )
    for name in options.allowed_mcp_server_names:
        if not name.strip() or "," in name:
            return OptionProblem(
                options=("allowed_mcp_server_names",),
                problem=f"{name!r} is not a server name: "
                "give each name apart (Gemini CLI splits them on commas), none empty",
            )
    return _servers_problem(options.mcp_servers)


_SESSION_ID = re.compile(r"[A-Za-z0-9_-]+")
"""What Gemini CLI takes as a ``--session-id``."""

_NOT_A_BRANCH = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|^/|/$|\.$|\.lock(/|$)|(^|/)\.")
"""What git's check-ref-format refuses in a branch name (``worktree-<name>``)."""


def _path_problem(options: GeminiOptions) -> OptionProblem | None:
    """A file or folder that is not there: Gemini CLI would go on without a policy silently,
    and stop with a stack trace on a missing system prompt."""
    cwd = Path(options.cwd or os.getcwd())
    for name in ("policy_files", "admin_policy_files"):
        for path in getattr(options, name):
            if "," in path:
                problem = "holds a comma, where Gemini CLI splits it: give each path apart"
            elif not path.strip() or not (cwd / path).exists():
                problem = "is not there (Gemini CLI would run without it, silently)"
            else:
                continue
            return OptionProblem(options=(name,), problem=f"{path!r} {problem}")
    for name in ("session_file", "system_prompt_file"):
        path = getattr(options, name)
        if path is not None and not (cwd / path).is_file():
            return OptionProblem(options=(name,), problem=f"{(cwd / path).resolve()} is not a file")
    return None


def _servers_problem(servers: tuple[McpServer, ...]) -> OptionProblem | None:
    names: set[str] = set()
    for server in servers:
        if not server.name.strip() or server.name in names:
            problem = f"{server.name!r}: give each server a name of its own"
        elif isinstance(server, acp.McpServerStdio) and not server.command.strip():
            problem = f"{server.name!r} has no command"
        elif not isinstance(server, acp.McpServerStdio) and not server.url.strip():
            problem = f"{server.name!r} has no url"
        else:
            names.add(server.name)
            continue
        return OptionProblem(options=("mcp_servers",), problem=problem)
    return None


def _extra_args_problem(args: tuple[str, ...]) -> OptionProblem | None:
    refused = refusal(args)
    if refused is None:
        return None
    return OptionProblem(
        options=("extra_args",),
        problem=f"{refused.arg!r} is not allowed: {refused.reason}",
        instead=refused.instead,
    )


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
