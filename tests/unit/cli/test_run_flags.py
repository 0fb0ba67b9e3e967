"""Bad flags of `gemwire run` are usage errors (exit 2) that name the flag (issue 11 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire import GeminiOptions, GeminiRun, run_gemini
from gemwire.cli import main
from gemwire.errors import InvalidOptions
from gemwire.testing.pinned import pinned_gemini


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
        ({"timeout": -5.0}, "timeout: must be more than 0 seconds, not -5.0"),
        ({"idle_timeout": float("nan")}, "idle_timeout: must be more than 0 seconds, not nan"),
        ({"max_model_turns": -1}, "max_model_turns: must be 0 or more, not -1"),
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


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--gemini-arg=-p", "--gemini-arg=x"],
            "--gemini-arg: '-p' is not allowed: the prompt goes on stdin",
        ),
        (
            ["--gemini-arg=--p=SMUGGLED"],
            "--gemini-arg: '--p=SMUGGLED' is not allowed: the prompt goes on stdin",
        ),
        (
            ["--gemini-arg=--query=SMUGGLED"],
            (
                "--gemini-arg: '--query=SMUGGLED' is not allowed: it is the prompt, which goes on "
                "stdin"
            ),
        ),
        (
            ["--gemini-arg=--o=json"],
            (
                "--gemini-arg: '--o=json' is not allowed: gemwire chooses the output format; "
                "use -o/--output-format"
            ),
        ),
        (
            ["--gemini-arg=--resume=abc"],
            (
                "--gemini-arg: '--resume=abc' is not allowed: gemwire locks the session it opens "
                "and guards it from Gemini's cleanup; use -r/--resume"
            ),
        ),
        (
            ["--gemini-arg=--session-id=abc"],
            (
                "--gemini-arg: '--session-id=abc' is not allowed: gemwire locks the session it "
                "opens; use --session-id"
            ),
        ),
        (
            ["--admin-policy", "/nonexistent.toml"],
            (
                "--admin-policy: '/nonexistent.toml' is not there (Gemini CLI would run without it, "
                "silently)"
            ),
        ),
        (
            ["--admin-policy="],
            "--admin-policy: '' is not there (Gemini CLI would run without it, silently)",
        ),
        (
            ["--allowed-mcp-server-names="],
            (
                "--allowed-mcp-server-names: '' is not a server name: give each name apart (Gemini "
                "CLI splits them on commas), none empty"
            ),
        ),
        (["--session-file", "gone.jsonl"], "--session-file: {cwd}/gone.jsonl is not a file"),
        (
            ["-r", "latest", "--session-id", "a"],
            "-r/--resume and --session-id: give one session to open",
        ),
        (
            ["-w", "a b"],
            (
                "-w/--worktree: 'a b' cannot be in a git branch name (Gemini CLI makes the branch "
                "worktree-<name>)"
            ),
        ),
        (
            ["-o", "json", "--idle-timeout", "5"],
            (
                "--idle-timeout and -o/--output-format: cannot work together: the json format "
                "prints nothing until the run is over"
            ),
        ),
    ],
)
def test_a_value_the_run_would_refuse_is_a_usage_error_naming_the_flag(
    args: list[str], error: str, tmp_path: Path
) -> None:
    argv = ["run", "--executable", "/bin/true", "--cwd", str(tmp_path), *args, "hi"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {error.format(cwd=tmp_path)}"


@pytest.mark.parametrize(
    ("version", "flag", "error"),
    [
        (
            "0.30.0",
            "--skip-trust",
            "--skip-trust: Gemini CLI 0.30.0 has no --skip-trust (it came in 0.39.1)",
        ),
        (
            "0.15.4",
            "--raw-output",
            "--raw-output: Gemini CLI 0.15.4 has no --raw-output (it came in 0.27.0)",
        ),
    ],
)
def test_a_flag_the_gemini_cli_lacks_is_a_usage_error(version: str, flag: str, error: str) -> None:
    argv = ["run", "--executable", str(pinned_gemini(version)), flag, "hi"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {error}"


def fake_gemini(tmp_path: Path, script: str) -> Path:
    """A gemini that answers --version and then runs ``script`` (sh)."""
    gemini = tmp_path / "gemini"
    gemini.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo 0.61.0; exit 0; fi\n{script}\n'
    )
    gemini.chmod(0o755)
    return gemini


def test_the_headless_flags_reach_gemini(tmp_path: Path) -> None:
    argv_file = tmp_path / "argv"
    gemini = fake_gemini(tmp_path, f"printf '%s\\n' \"$@\" > {argv_file}")
    (tmp_path / "a.toml").write_text("")
    (tmp_path / "s.jsonl").write_text("")
    flags = ["--skip-trust", "-w", "wt", "--admin-policy", "a.toml", "--session-file", "s.jsonl"]
    flags += ["--allowed-mcp-server-names", "git", "--raw-output", "--gemini-arg=--debug"]
    argv = ["run", "--executable", str(gemini), "--cwd", str(tmp_path), "--json", *flags, "hi"]
    CliRunner().invoke(main, argv)
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


def test_mcp_servers_reach_gemini_in_its_settings(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    gemini = fake_gemini(tmp_path, f'cat "$GEMINI_CLI_HOME/.gemini/settings.json" > {seen}')
    servers = {
        "db": {"command": "db-mcp", "args": ["--readonly"], "env": {"DB": "x"}},
        "docs": {"httpUrl": "https://docs.example/mcp", "headers": {"A": "b"}},
        "old": {"url": "https://old.example/sse"},
    }
    (tmp_path / "servers.json").write_text(json.dumps(servers))
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    argv = ["run", "--executable", str(gemini), "--cwd", str(tmp_path), "--json"]
    argv += ["--gemini-home", str(home), "--mcp-servers", str(tmp_path / "servers.json"), "hi"]
    CliRunner().invoke(main, argv)
    assert json.loads(seen.read_text())["mcpServers"] == {
        "db": {
            "command": "db-mcp",
            "args": ["--readonly"],
            "env": {"DB": "x"},
            "cwd": str(tmp_path),
        },
        "docs": {"httpUrl": "https://docs.example/mcp", "headers": {"A": "b"}},
        "old": {"url": "https://old.example/sse", "headers": {}},
    }


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "cannot read {file}: No such file or directory"),
        ("[1]", "{file}: not a JSON object of MCP servers by name: Expected `object`, got `array`"),
        (
            '{"db": {"command": "x", "trust": true}}',
            (
                "{file}: server 'db': Object contains unknown field `trust` (one takes command, "
                "args and env, or httpUrl, or url, type and headers here; put the others in "
                "settings.json)"
            ),
        ),
        ('{"db": {"args": []}}', "{file}: server 'db': give it one of command, httpUrl and url"),
    ],
)
def test_a_bad_mcp_servers_file_is_a_usage_error(
    content: str | None, error: str, tmp_path: Path
) -> None:
    file = tmp_path / "servers.json"
    if content is not None:
        file.write_text(content)
    result = CliRunner().invoke(main, ["run", "--mcp-servers", str(file), "hi"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--mcp-servers': {error.format(file=file)}"
    )


def test_the_session_file_help_says_what_gemini_cli_writes() -> None:
    result = CliRunner().invoke(main, ["run", "--help"])
    assert "session saved in this file (a session-*.jsonl)" in " ".join(result.output.split())


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
