"""The Gemini CLI and Node.js checks (with the pinned CLI and the real node), and
`check_gemini_environment`, which runs every check a headless run here needs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import msgspec
import pytest

import gemwire
from gemwire.checks import Check, check_gemini_environment
from gemwire.checks.install import gemini_cli, node
from gemwire.testing import pinned_gemini

SECRET = "AIza-not-a-real-key-0123456789"
NAMES = ["Gemini CLI", "Node.js", "Gemini home", "auth", "folder trust", "session retention"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "work" / "project").mkdir(parents=True)
    return tmp_path / "work" / "project"


def test_the_pinned_cli_is_found_tested_and_node_is_new_enough(workspace: Path) -> None:
    check, launcher = gemini_cli(str(pinned_gemini()), workspace)
    assert check.status == "ok"
    assert check.summary == f"0.61.0 at {pinned_gemini()} (from explicit): tested"
    found = node(launcher, dict(os.environ))
    assert found.status == "ok"
    assert re.fullmatch(r"\d+\.\d+\.\d+ at /\S*node", found.summary)


def test_a_missing_cli_or_node_fails(tmp_path: Path, workspace: Path) -> None:
    check, launcher = gemini_cli(str(tmp_path / "nope"), workspace)
    assert (check.status, launcher) == ("fail", None)
    assert check.summary == f"explicit {tmp_path / 'nope'} is not an executable file"
    assert node(None, {"PATH": str(tmp_path)}).summary == "node is not on PATH"


def test_every_check_in_the_order_a_person_fixes_things(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"general": {"sessionRetention": {"enabled": False}}})
    )
    environ = {
        "PATH": os.environ["PATH"],
        "GEMINI_API_KEY": SECRET,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    found = gemwire.check_gemini_environment(
        workspace, executable=str(pinned_gemini()), gemini_home=home, environ=environ
    )
    assert [check.name for check in found] == NAMES
    assert [check.status for check in found] == ["ok"] * 6
    assert [check.summary for check in found[2:]] == [
        f"{home} (from explicit)",
        "gemini-api-key (from GEMINI_API_KEY)",
        f"{workspace} is trusted (GEMINI_CLI_TRUST_WORKSPACE=true)",
        f"cleanup is off ({home / '.gemini' / 'settings.json'})",
    ]
    assert SECRET not in repr(found)


def test_the_home_comes_from_gemini_cli_home_and_the_results_are_frozen(
    tmp_path: Path, workspace: Path
) -> None:
    environ = {"PATH": str(tmp_path), "GEMINI_CLI_HOME": str(tmp_path / "elsewhere")}
    found = check_gemini_environment(workspace, environ=environ)
    assert [check.name for check in found] == NAMES
    assert found[2] == Check(
        name="Gemini home",
        status="warn",
        summary=f"{tmp_path / 'elsewhere'} (from GEMINI_CLI_HOME) has no .gemini folder yet",
        fix="run `gemini` there once (interactively), or set GEMINI_API_KEY; the first run "
        "creates it",
    )
    assert (found[3].status, found[4].status) == ("fail", "fail")  # no auth, not trusted
    with pytest.raises(AttributeError):
        found[0].status = "ok"  # type: ignore[misc]
    assert msgspec.json.decode(msgspec.json.encode(found[2]), type=Check) == found[2]
