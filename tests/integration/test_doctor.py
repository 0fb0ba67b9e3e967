"""`gemwire doctor`: gemwire's config first, then the library's checks, printed with fixes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.cli.doctor import run_checks
from gemwire.testing import pinned_gemini

SECRET = "AIza-not-a-real-key-0123456789"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".gemini").mkdir(parents=True)
    return tmp_path / "home"


def test_no_cli_anywhere_in_a_checkout_points_at_the_pinned_one(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After `make demo` in a checkout, the CLI it ran is in clis/, on no PATH.
    monkeypatch.delenv("GEMINI_CLI_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("gemwire.runners.discovery._COMMON_LOCATIONS", ())
    environ = {"GEMWIRE_CONFIG": str(tmp_path / "none.toml")}
    found = run_checks(cwd=tmp_path, executable=None, gemini_home=str(home), environ=environ)
    cli = found[1]
    assert (cli.name, cli.status) == ("Gemini CLI", "fail")
    assert cli.fix == (
        f"use the Gemini CLI `make demo` installed: export GEMINI_CLI_PATH={pinned_gemini()} "
        f"(or `gemwire config set executable {pinned_gemini()}`)"
    )
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path))  # not a checkout with the pinned CLI
    found = run_checks(cwd=tmp_path, executable=None, gemini_home=str(home), environ=environ)
    assert (found[1].status, found[1].fix) == ("fail", None)


def test_doctor_exits_1_on_a_failure_and_prints_no_secret(tmp_path: Path, home: Path) -> None:
    env = {
        "GEMWIRE_CONFIG": str(tmp_path / "none.toml"),
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_API_KEY": SECRET,
    }
    args = ["doctor", "--executable", str(pinned_gemini()), "--cwd", str(tmp_path)]
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 1  # the folder is not trusted
    assert SECRET not in result.output
    names = [line[2:20].strip() for line in result.stdout.splitlines() if line[:1] in "✓!✗"]
    assert names == [
        "gemwire config",
        "Gemini CLI",
        "Node.js",
        "Gemini home",
        "auth",
        "folder trust",
        "session retention",
        "agent claude",
        "agent codex",
        "agent qwen",
        "agent opencode",
        "agent gemini",
        "agent antigravity",
    ]
    result = CliRunner().invoke(main, args, env={**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert result.exit_code == 0
