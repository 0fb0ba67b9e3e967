"""What is wrong with a run's `GeminiOptions`, found before the run starts.

The prompt (it goes on stdin, and the CLI reads only so much of it); each field's type (a
`GeminiOptions` is not checked when it is made) and value; paths the CLI would skip silently;
options that cannot work together; ``extra_args``, the flags gemwire has no field for: never
the prompt, never a flag gemwire owns (`runners._gemini_args`); and the Gemini CLI version
each option needs (`REQUIREMENTS`). A problem is said naming no option (`OptionProblem`), so
that the Python API names fields and ``gemwire run`` its flags.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

import msgspec

from gemwire.errors import InvalidOptions, PromptTooLarge
from gemwire.runners._gemini_args import refusal
from gemwire.runners.discovery import version_key
from gemwire.runners.gemini_options import MAX_PROMPT_BYTES, GeminiOptions, McpServer
from gemwire.wire import acp

__all__ = (
    "REQUIREMENTS",
    "OptionProblem",
    "Requirement",
    "check_extra_args",
    "check_run",
    "check_version",
    "option_problem",
    "version_problem",
)


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
    for check in _CHECKS:
        problem = check(options)
        if problem is not None:
            return problem
    return version_problem(options, version) if version is not None else None


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
    problem = _extra_args_problem(GeminiOptions(extra_args=args))
    if problem is not None:
        raise InvalidOptions(problem.message())


_TEXTS = tuple[str, ...]


@functools.cache
def _fields() -> tuple[msgspec.structs.FieldInfo, ...]:
    """`GeminiOptions`' fields, their types resolved once: msgspec resolves them again at
    each call (about 1 ms, twice a run: bench/eval_overhead.py)."""
    return msgspec.structs.fields(GeminiOptions)


def _type_problem(options: GeminiOptions) -> OptionProblem | None:
    """A field of the wrong type: `GeminiOptions` does not check them when it is made."""
    for field in _fields():
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


def _conflict_problem(options: GeminiOptions) -> OptionProblem | None:
    opened = [
        n for n in ("resume", "session_id", "session_file") if getattr(options, n) is not None
    ]
    if len(opened) > 1:
        return OptionProblem(options=tuple(opened), problem="give one session to open")
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
    return None


def _number_problem(options: GeminiOptions) -> OptionProblem | None:
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
    return None


def _nul_problem(options: GeminiOptions) -> OptionProblem | None:
    """A NUL byte in what goes into argv or the environment (``extra_args``: `refusal`)."""
    for field in _fields():
        value = getattr(options, field.name)
        if field.name == "env":
            texts = [*value, *value.values()]
        else:
            texts = [value] if isinstance(value, str) else value if field.type == _TEXTS else []
        if field.name != "extra_args" and any("\x00" in text for text in texts):
            return OptionProblem(
                options=(field.name,), problem="holds a NUL byte, which no program can be given"
            )
    return None


def _name_problem(options: GeminiOptions) -> OptionProblem | None:
    """A name Gemini CLI would refuse late, read as none, or split in two."""
    if options.resume is not None and not options.resume.strip():
        return OptionProblem(
            options=("resume",), problem="is empty: give latest, an index or a session id"
        )
    session_id = options.session_id
    if session_id is not None and not _SESSION_ID.fullmatch(session_id):
        return OptionProblem(
            options=("session_id",),
            problem=f"Gemini CLI takes only letters, digits, - and _ in one, not {session_id!r}",
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
    return None


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


def _servers_problem(options: GeminiOptions) -> OptionProblem | None:
    names: set[str] = set()
    for server in options.mcp_servers:
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


def _extra_args_problem(options: GeminiOptions) -> OptionProblem | None:
    refused = refusal(options.extra_args)
    if refused is None:
        return None
    return OptionProblem(
        options=("extra_args",),
        problem=f"{refused.arg!r} is not allowed: {refused.reason}",
        instead=refused.instead,
    )


_CHECKS: tuple[Callable[[GeminiOptions], OptionProblem | None], ...] = (
    _type_problem,  # first: the others read the fields as their types say
    _conflict_problem,
    _number_problem,
    _nul_problem,
    _name_problem,
    _path_problem,
    _servers_problem,
    _extra_args_problem,
)
