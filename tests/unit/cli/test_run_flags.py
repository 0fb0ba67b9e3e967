"""Bad flags of `gemwire run` are usage errors (exit 2) that name the flag (issue 11 item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire import GeminiOptions, GeminiRun, run_gemini
from gemwire.cli import main
from gemwire.errors import InvalidOptions


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--cwd", "/nonexistent"],
            "Invalid value for '--cwd': Directory '/nonexistent' does not exist.",
        ),
        (["--timeout", "-5"], "Invalid value for '--timeout': -5.0 is not in the range x>0."),
        (
            ["--idle-timeout", "0"],
            "Invalid value for '--idle-timeout': 0.0 is not in the range x>0.",
        ),
        (
            ["--max-tool-calls", "-1"],
            "Invalid value for '--max-tool-calls': -1 is not in the range x>=0.",
        ),
    ],
)
def test_a_bad_flag_is_a_usage_error_naming_it(args: list[str], error: str) -> None:
    result = CliRunner().invoke(main, ["run", *args, "hi"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {error}"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"timeout": -5.0}, "timeout must be more than 0 seconds, not -5.0"),
        ({"idle_timeout": float("nan")}, "idle_timeout must be more than 0 seconds, not nan"),
        ({"max_model_turns": -1}, "max_model_turns must be 0 or more, not -1"),
    ],
)
def test_the_library_refuses_the_same_values(
    option: dict[str, float], message: str, tmp_path: Path
) -> None:
    with pytest.raises(InvalidOptions, match=f"^{message}$"):
        GeminiRun("hi", GeminiOptions(executable="/bin/true", cwd=str(tmp_path), **option))  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_missing_cwd_is_invalid_options_not_a_missing_program(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(InvalidOptions) as caught:
        async with run_gemini("hi", GeminiOptions(executable="/bin/true", cwd=str(missing))):
            pass
    assert str(caught.value) == f"cannot run /bin/true in {missing}: the folder does not exist"


def test_an_unsafe_lock_folder_is_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    (runtime / "gemwire-sessions").mkdir(parents=True)
    (runtime / "gemwire-sessions").chmod(0o777)
    gemini = tmp_path / "gemini"
    gemini.write_text("#!/bin/sh\n")
    gemini.chmod(0o755)
    argv = ["run", "--executable", str(gemini), "--cwd", str(tmp_path), "--resume", "abc", "hi"]
    result = CliRunner().invoke(main, argv, env={"XDG_RUNTIME_DIR": str(runtime)})
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"gemwire: refusing the session lock folder {runtime}/gemwire-sessions: others may write"
    )


def test_an_extra_argument_gemwire_owns_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        main, ["run", "--executable", "/bin/true", "--gemini-arg=-p", "--gemini-arg=x", "hi"]
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: extra_args: -p is not allowed: the prompt goes on stdin"
    )


def test_the_headless_flags_reach_gemini(tmp_path: Path) -> None:
    argv_file = tmp_path / "argv"
    gemini = tmp_path / "gemini"
    gemini.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo 0.61.0; exit 0; fi\n'
        f"printf '%s\\n' \"$@\" > {argv_file}\n"
    )
    gemini.chmod(0o755)
    flags = ["--skip-trust", "-w", "wt", "--admin-policy", "a.toml", "--session-file", "s.jsonl"]
    flags += ["--allowed-mcp-server-names", "git", "--raw-output", "--gemini-arg=--debug"]
    CliRunner().invoke(main, ["run", "--executable", str(gemini), "--json", *flags, "hi"])
    assert argv_file.read_text().splitlines() == [
        "--output-format",
        "stream-json",
        "--admin-policy",
        "a.toml",
        "--allowed-mcp-server-names",
        "git",
        "--skip-trust",
        "--worktree",
        "wt",
        "--raw-output",
        "--accept-raw-output-risk",
        "--session-file",
        "s.jsonl",
        "--debug",
    ]


def test_the_system_prompt_file_reaches_gemini_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "seen"
    gemini = tmp_path / "gemini"
    gemini.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo 0.61.0; exit 0; fi\n'
        f'printf %s "$GEMINI_SYSTEM_MD" > {seen}\n'
    )
    gemini.chmod(0o755)
    (tmp_path / "pirate.md").write_text("Arr.")
    monkeypatch.chdir(tmp_path)
    args = ["run", "--executable", str(gemini), "--json", "--system-prompt-file", "pirate.md"]
    CliRunner().invoke(main, [*args, "hi"])
    assert seen.read_text() == str(tmp_path / "pirate.md")
    missing = CliRunner().invoke(main, [*args[:-1], "nothing.md", "hi"])
    assert missing.exit_code == 2
    assert "'nothing.md' does not exist" in missing.output
