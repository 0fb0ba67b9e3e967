"""Gemini CLI 0.61.0's headless flags as `GeminiOptions` fields, and ``extra_args``: what goes
into argv, and what is refused before anything starts."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from kit.gemini_spellings import owned_flags, safe_args

from gemwire import GeminiOptions
from gemwire.errors import InvalidOptions
from gemwire.runners._gemini_args import refusal
from gemwire.runners.discovery import GeminiExecutable, version_key
from gemwire.runners.gemini import GeminiRun
from gemwire.runners.gemini_checks import (
    REQUIREMENTS,
    Requirement,
    check_extra_args,
    check_run,
    option_problem,
)
from gemwire.runners.gemini_options import build_argv
from gemwire.testing.pinned import CURRENT_VERSION, pinned_gemini
from gemwire.wire.acp import McpServerStdio

GEMINI = GeminiExecutable(path="/bin/gemini", version="0.61.0", source="explicit")
BASE = ["/bin/gemini", "--output-format", "stream-json"]


def test_each_new_option_is_its_flag() -> None:
    options = GeminiOptions(
        admin_policy_files=("admin.toml", "admin.d"),
        allowed_mcp_server_names=("git", "docs"),
        skip_trust=True,
        worktree="feature",
        raw_output=True,
        session_file="/s/session.json",
        extra_args=("--debug", "--screen-reader"),
    )
    assert build_argv(GEMINI, options) == [
        *BASE,
        "--admin-policy",
        "admin.toml",
        "--admin-policy",
        "admin.d",
        "--allowed-mcp-server-names",
        "git",
        "--allowed-mcp-server-names",
        "docs",
        "--skip-trust",
        "--worktree",
        "feature",
        "--raw-output",
        "--accept-raw-output-risk",
        "--session-file",
        "/s/session.json",
        "--debug",
        "--screen-reader",
    ]


def test_an_empty_worktree_name_asks_for_a_generated_one() -> None:
    assert build_argv(GEMINI, GeminiOptions(worktree="")) == [*BASE, "--worktree"]
    assert build_argv(GEMINI, GeminiOptions()) == BASE


def test_a_value_starting_with_a_dash_is_never_read_as_a_flag() -> None:
    """``--worktree -x`` is ``--worktree`` with no value, then a flag ``-x`` (Gemini CLI 0.61.0
    made a worktree of a generated name, then stopped on "Unknown argument: x")."""
    options = GeminiOptions(
        model="-p", worktree="-x", admin_policy_files=("-a.toml",), extensions=("e",)
    )
    assert build_argv(GEMINI, options) == [
        *BASE,
        "--model=-p",
        "--admin-policy=-a.toml",
        "--worktree=-x",
        "--extensions",
        "e",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("--model", "flash"),
        ("-m", "flash", "-d"),
        ("--policy=a.toml", "--skip-trust"),
        ("--include-directories", "../lib", "--yolo"),
        ("--some-future-flag=x",),
        ("--worktree",),
        ("--model=-p",),
        ("--fake-responses", "f.json"),
        ("--no-sandbox", "--m=flash"),
    ],
)
def test_extra_args_that_pass(args: tuple[str, ...]) -> None:
    check_extra_args(args)
    check_run(b"hi", GeminiOptions(extra_args=args))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-p", "hi"), "'-p' is not allowed: the prompt goes on stdin"),
        (("--prompt=hi",), "'--prompt=hi' is not allowed: the prompt goes on stdin"),
        (("--prompt-interactive", "x"), "a run is headless"),
        (("-o", "json"), "gemwire chooses the output format; use output_format"),
        (("--output_format=text",), "gemwire chooses the output format"),
        (("--outputFormat", "text"), "gemwire chooses the output format"),
        (("--acp",), "gemwire acp"),
        (("--experimental-acp",), "gemwire acp"),
        (("--list-sessions",), "gemwire sessions list"),
        (("--delete-session", "1"), "deletes a session"),
        (("-v",), "prints the version"),
        (("--help",), "prints the help"),
        (("say", "hi"), "'say' is not allowed: it is not the value of a flag"),
        (("--debug", "say hi"), "'say hi' is not allowed: it is not the value of a flag"),
        (("--model", "flash", "extra"), "'extra' is not allowed"),
        (("--model=flash", "extra"), "'extra' is not allowed"),
        (("--some-future-flag", "x"), "'x' is not allowed"),
        (("--", "-p"), "'--' is not allowed"),
        (("-yp",), "'-yp' is not allowed: yargs reads it as several flags"),
        (("-mflash",), "'-mflash' is not allowed: yargs reads it as several flags"),
        (("--no-prompt",), "the prompt goes on stdin"),
        # What an audit passed through against 0.61.0, and what the real parser made of it:
        (("--p=SMUGGLED",), "the prompt goes on stdin"),  # the prompt, "...\n\nSMUGGLED"
        (("--query=SMUGGLED",), "it is the prompt"),  # the same
        (("--_=SMUGGLED",), "a positional argument"),  # the same
        (("--o=json",), "gemwire chooses the output format"),  # the answer as a notice
        (("--o=text",), "gemwire chooses the output format"),
        (("--prompt.x=1",), "the prompt goes on stdin"),  # the prompt "...[object Object]"
        (("--acp.x=1",), "gemwire acp"),
        (("--v",), "prints the version"),
        (("--h",), "prints the help"),
        (("--l",), "lists extensions"),
        (("--resume=abc",), "from Gemini's cleanup; use resume"),
        (("--session-id", "abc"), "; use session_id"),
        (("--session-file=s.jsonl",), "; use session_file"),
        (("---output-format=json",), "gemwire chooses the output format"),
        (("--output--format=json",), "gemwire chooses the output format"),
        (("--PROMPT-INTERACTIVE=x",), "a run is headless"),
        (("--isCommand",), "internal mark of a subcommand"),
        (("-5",), "yargs reads a negative number as the prompt"),  # the prompt "-5"
        (("-.5",), "yargs reads a negative number as the prompt"),
        (("--no-model", "SMUGGLED"), "'SMUGGLED' is not allowed"),  # the prompt
        (("--model", "-p"), "'-p' is not allowed: the prompt goes on stdin"),
        (("-",), "'-' is not allowed: it is not the value of a flag"),
        (("--debug=\x00",), "a NUL byte"),
    ],
)
def test_extra_args_that_are_refused(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(InvalidOptions, match=r"^extra_args: ") as caught:
        check_run(b"hi", GeminiOptions(extra_args=args))
    assert message in str(caught.value)


@given(owned_flags(), safe_args, safe_args)
def test_every_spelling_of_an_owned_flag_is_refused(
    flag: str, before: list[str], after: list[str]
) -> None:
    refused = refusal((*before, flag, *after))
    assert refused is not None
    assert refused.arg == flag


@given(safe_args)
def test_flags_gemwire_does_not_own_pass_with_their_values(args: list[str]) -> None:
    assert refusal(tuple(args)) is None


def test_the_problem_names_the_options_as_each_surface_calls_them() -> None:
    refused = option_problem(GeminiOptions(extra_args=("--o=json",)))
    assert refused is not None
    flags = {"extra_args": "--gemini-arg", "output_format": "-o/--output-format"}
    assert refused.message(flags.__getitem__) == (
        "--gemini-arg: '--o=json' is not allowed: gemwire chooses the output format; "
        "use -o/--output-format"
    )


def test_only_one_session_to_open() -> None:
    with pytest.raises(InvalidOptions, match=r"^resume and session_file: give one session"):
        check_run(b"hi", GeminiOptions(resume="latest", session_file="s.json"))


def test_a_missing_system_prompt_file_is_refused_before_the_cli_starts(tmp_path: Path) -> None:
    executable = str(pinned_gemini(CURRENT_VERSION))
    options = GeminiOptions(cwd=str(tmp_path), executable=executable)
    with pytest.raises(InvalidOptions, match=f"system_prompt_file: {tmp_path}/1 is not a file"):
        GeminiRun("hi", msgspec.structs.replace(options, system_prompt_file="1"))
    (tmp_path / "1").write_text("Be brief.")
    run = GeminiRun("hi", msgspec.structs.replace(options, system_prompt_file="1"))
    # A path, never the bare "1" the CLI would read as "use .gemini/system.md".
    assert run._env["GEMINI_SYSTEM_MD"] == str(tmp_path / "1")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"admin_policy_files": "a.toml"}, "admin_policy_files: takes a tuple of strings, not one"),
        ({"extra_args": "--debug"}, "extra_args: takes a tuple of strings, not one string"),
        ({"raw_output": "no"}, "raw_output: Expected `bool`, got `str`, not 'no'"),
        ({"env": {"A": 1}}, "env: Expected `str`, got `int`"),
        ({"timeout": "5"}, "timeout: Expected `float | null`, got `str`"),
        ({"mcp_servers": ({"name": "t"},)}, "mcp_servers: takes a tuple of McpServerStdio"),
    ],
)
def test_a_field_of_the_wrong_type_is_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOptions) as caught:
        check_run(b"hi", GeminiOptions(**changes))  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"admin_policy_files": ("/nonexistent.toml",)},
            (
                "admin_policy_files: '/nonexistent.toml' is not there (Gemini CLI would run "
                "without it, silently)"
            ),
        ),
        ({"admin_policy_files": ("",)}, "admin_policy_files: '' is not there"),
        ({"policy_files": ("missing.toml",)}, "policy_files: 'missing.toml' is not there"),
        (
            {"admin_policy_files": ("a.toml,b.toml",)},
            "admin_policy_files: 'a.toml,b.toml' holds a comma, where Gemini CLI splits it",
        ),
        (
            {"allowed_mcp_server_names": ("",)},
            "allowed_mcp_server_names: '' is not a server name: give each name apart",
        ),
        (
            {"allowed_mcp_server_names": (" ",)},
            "allowed_mcp_server_names: ' ' is not a server name",
        ),
        (
            {"allowed_mcp_server_names": ("a,b",)},
            "allowed_mcp_server_names: 'a,b' is not a server name",
        ),
        ({"worktree": "a b"}, "worktree: 'a b' cannot be in a git branch name"),
        ({"worktree": "../x"}, "worktree: '../x' cannot be in a git branch name"),
        ({"worktree": "x.lock"}, "worktree: 'x.lock' cannot be in a git branch name"),
        ({"worktree": " "}, "worktree: ' ' cannot be in a git branch name"),
        ({"session_id": "bad id"}, "session_id: Gemini CLI takes only letters, digits, - and _"),
        ({"session_id": ""}, "session_id: Gemini CLI takes only letters"),
        ({"session_file": ""}, "session_file: {cwd} is not a file"),
        ({"session_file": "gone.jsonl"}, "session_file: {cwd}/gone.jsonl is not a file"),
        ({"resume": ""}, "resume: is empty: give latest, an index or a session id"),
        ({"model": "a\x00b"}, "model: holds a NUL byte"),
        ({"mcp_servers": (McpServerStdio(name="", command="t"),)}, "mcp_servers: '': give"),
        (
            {"mcp_servers": (McpServerStdio(name="t", command=""),)},
            "mcp_servers: 't' has no command",
        ),
        (
            {"mcp_servers": (McpServerStdio(name="t", command="a"),) * 2},
            "mcp_servers: 't': give each server a name of its own",
        ),
        (
            {"output_format": "json", "idle_timeout": 5.0},
            "idle_timeout and output_format: cannot work together",
        ),
    ],
)
def test_a_value_gemini_cli_would_ignore_or_crash_on_is_refused(
    changes: dict[str, object], message: str, tmp_path: Path
) -> None:
    (tmp_path / "a.toml").write_text("")
    (tmp_path / "s.jsonl").write_text("")
    options = GeminiOptions(cwd=str(tmp_path), **changes)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptions) as caught:
        check_run(b"hi", options)
    assert str(caught.value).startswith(message.format(cwd=tmp_path))


def test_what_is_there_passes(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("")
    (tmp_path / "policies").mkdir()
    (tmp_path / "s.jsonl").write_text("")
    options = GeminiOptions(
        cwd=str(tmp_path),
        admin_policy_files=("a.toml", "policies", str(tmp_path / "a.toml")),
        policy_files=("policies",),
        allowed_mcp_server_names=("git",),
        worktree="feature/one",
        session_file="s.jsonl",
        model="flash",
        timeout=5,  # an int for a float
    )
    check_run(b"hi", options)
    check_run(b"hi", msgspec.structs.replace(options, session_file=None, session_id="a-b_1"))


@pytest.mark.parametrize("version", ["0.15.4", "0.30.0"])
@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=lambda r: r.option)
def test_an_option_the_pinned_cli_lacks_is_refused_before_it_starts(
    version: str, requirement: Requirement, tmp_path: Path
) -> None:
    (tmp_path / "p.toml").write_text("")
    (tmp_path / "s.jsonl").write_text("")
    value = {
        "approval_mode": "plan",
        "mcp_servers": (McpServerStdio(name="t", command="tiny"),),
        "policy_files": ("p.toml",),
        "admin_policy_files": ("p.toml",),
        "worktree": "wt",
        "session_id": "my-id",
        "session_file": "s.jsonl",
    }.get(requirement.option, True)
    options = GeminiOptions(
        cwd=str(tmp_path),
        executable=str(pinned_gemini(version)),
        **{requirement.option: value},  # type: ignore[arg-type]
    )
    assert requirement.used_by(options)
    if version_key(version) >= version_key(requirement.since):
        GeminiRun("hi", options)
        return
    with pytest.raises(InvalidOptions) as caught:
        GeminiRun("hi", options)
    assert str(caught.value) == (
        f"{requirement.option}: Gemini CLI {version} has no {requirement.needs} "
        f"(it came in {requirement.since})"
    )


def test_the_pinned_0_30_refuses_what_the_audit_ran_into(tmp_path: Path) -> None:
    """With 0.30.0 and --skip-trust the run failed inside the CLI: "Unknown arguments:
    skip-trust"; and --raw-output is not in 0.15.4."""
    old = GeminiOptions(cwd=str(tmp_path), executable=str(pinned_gemini("0.30.0")))
    with pytest.raises(InvalidOptions, match=r"^skip_trust: Gemini CLI 0\.30\.0 has no"):
        GeminiRun("hi", msgspec.structs.replace(old, skip_trust=True))
    GeminiRun("hi", msgspec.structs.replace(old, raw_output=True))
    older = msgspec.structs.replace(old, executable=str(pinned_gemini("0.15.4")), raw_output=True)
    with pytest.raises(InvalidOptions, match=r"^raw_output: Gemini CLI 0\.15\.4 has no --raw"):
        GeminiRun("hi", older)
    GeminiRun("hi", msgspec.structs.replace(old, executable=str(pinned_gemini()), skip_trust=True))
