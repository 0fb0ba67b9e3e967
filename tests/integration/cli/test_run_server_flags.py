"""`gemwire run --server`: what is not for a server is a usage error; a server that is not
there, or an install without the extra, is one line."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from gemwire.cli import main


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--agent", "claude"], "--agent needs --server (locally, `gemwire acp --agent`)"),
        (
            ["--server", "http://127.0.0.1:1", "--sandbox", "-r", "latest"],
            "--resume, --sandbox: not available with --server",
        ),
        (  # the flags as typed, not their Python names (--extra-args, --admin-policy-files)
            ["--server", "http://h", "--gemini-arg=--debug", "--admin-policy", "p.toml"],
            "--admin-policy, --gemini-arg: not available with --server",
        ),
    ],
)
def test_what_a_server_does_not_take_is_a_usage_error(args: list[str], error: str) -> None:
    result = CliRunner().invoke(main, ["run", *args, "hi"])
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (2, f"Error: {error}")


def test_no_server_there_is_one_line_and_exit_4() -> None:
    result = CliRunner().invoke(main, ["run", "--server", "http://127.0.0.1:1", "hi"])
    assert result.exit_code == 4  # as `gemwire acp --connect` to no endpoint
    assert result.stdout == ""
    assert result.stderr.startswith("gemwire: POST /v1/sessions: ConnectError(")
    assert result.stderr.count("\n") == 1


def test_without_the_extra_it_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['httpx'] = None; from gemwire.cli import main; "
        "main(['run', '--server', 'http://127.0.0.1:1', 'hi'])"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "gemwire: gemwire.remote needs the [remote] extra: pip install 'gemwire[remote]'\n"
    )
