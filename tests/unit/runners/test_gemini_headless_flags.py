"""Gemini CLI 0.61.0's headless flags as `GeminiOptions` fields, and ``extra_args``: what goes
into argv, and what is refused before anything starts."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, strategies as st

from gemwire import GeminiOptions
from gemwire.errors import InvalidOptions
from gemwire.runners.discovery import GeminiExecutable
from gemwire.runners.gemini import GeminiRun
from gemwire.runners.gemini_options import build_argv, check_extra_args, check_run
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


@pytest.mark.parametrize(
    "args",
    [
        ("--model", "flash"),
        ("-m", "flash", "-d"),
        ("--policy=a.toml", "--skip-trust"),
        ("--include-directories", "../lib", "--yolo"),
        ("--some-future-flag=x",),
        ("--worktree",),
    ],
)
def test_extra_args_that_pass(args: tuple[str, ...]) -> None:
    check_extra_args(args)
    check_run(b"hi", GeminiOptions(extra_args=args))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-p", "hi"), "-p is not allowed: the prompt goes on stdin"),
        (("--prompt=hi",), "--prompt=hi is not allowed: the prompt goes on stdin"),
        (("--prompt-interactive", "x"), "a run is headless"),
        (("-o", "json"), "gemwire chooses the output format"),
        (("--output_format=text",), "gemwire chooses the output format"),
        (("--outputFormat", "text"), "gemwire chooses the output format"),
        (("--acp",), "gemwire acp"),
        (("--experimental-acp",), "gemwire acp"),
        (("--list-sessions",), "gemwire sessions list"),
        (("--delete-session", "1"), "deletes a session"),
        (("-v",), "prints the version"),
        (("--help",), "prints the help"),
        (("say", "hi"), "'say' is not the value of a flag"),
        (("--debug", "say hi"), "'say hi' is not the value of a flag"),
        (("--model", "flash", "extra"), "'extra' is not the value of a flag"),
        (("--model=flash", "extra"), "'extra' is not the value of a flag"),
        (("--some-future-flag", "x"), "'x' is not the value of a flag"),
        (("--", "-p"), "-- is not allowed"),
        (("-yp",), "'-yp' is ambiguous"),
        (("-mflash",), "'-mflash' is ambiguous"),
        (("--no-prompt",), "the prompt goes on stdin"),
    ],
)
def test_extra_args_that_are_refused(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(InvalidOptions, match=r"^extra_args: ") as caught:
        check_run(b"hi", GeminiOptions(extra_args=args))
    assert message in str(caught.value)


VALUE_FLAGS = {
    "model",
    "m",
    "worktree",
    "w",
    "approvalmode",
    "policy",
    "adminpolicy",
    "allowedmcpservernames",
    "allowedtools",
    "extensions",
    "e",
    "resume",
    "r",
    "sessionfile",
    "sessionid",
    "includedirectories",
}


def normalized(flag: str) -> str:
    return flag.split("=", 1)[0].replace("-", "").replace("_", "").lower()


@given(
    st.lists(
        st.sampled_from(["-p", "-o", "--model", "-m", "x", "--debug", "--", "-"])
        | st.text(max_size=12),
        max_size=6,
    )
)
def test_extra_args_never_carry_a_prompt_or_an_output_format(args: list[str]) -> None:
    """Whatever passes: every bare word follows a flag that takes it (without ``=``), and no
    argument names the prompt or the output format in any spelling yargs reads."""
    try:
        check_extra_args(tuple(args))
    except InvalidOptions:
        return
    previous = ""
    for arg in args:
        if not arg.startswith("-") or arg == "-":
            assert "=" not in previous
            assert normalized(previous) in VALUE_FLAGS
        else:
            assert normalized(arg) not in ("p", "o", "i", "prompt", "outputformat")
        previous = arg


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


def test_mcp_servers_need_a_cli_that_knows_gemini_cli_home(tmp_path: Path) -> None:
    server = McpServerStdio(name="t", command="tiny")
    options = GeminiOptions(
        cwd=str(tmp_path), executable=str(pinned_gemini("0.15.4")), mcp_servers=(server,)
    )
    with pytest.raises(InvalidOptions, match=r"mcp_servers need Gemini CLI 0\.30 or newer"):
        GeminiRun("hi", options)
