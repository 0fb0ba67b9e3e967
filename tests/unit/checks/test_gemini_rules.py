"""Gemini CLI's rules (home, auth, folder trust, session retention) against made-up homes
and workspaces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemwire.checks import gemini_rules as checks

SECRET = "AIza-not-a-real-key-0123456789"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".gemini").mkdir(parents=True)
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "work" / "project").mkdir(parents=True)
    return tmp_path / "work" / "project"


def settings(home: Path, data: object) -> None:
    (home / ".gemini" / "settings.json").write_text(json.dumps(data))


def test_no_auth_at_all_fails_with_the_fix(home: Path, workspace: Path) -> None:
    check = checks.auth(home, workspace, {})
    assert (check.status, check.summary) == ("fail", "no auth method: headless runs exit 41")
    assert check.fix is not None
    assert "GEMINI_API_KEY" in check.fix


def test_an_api_key_is_found_but_never_shown(home: Path, workspace: Path) -> None:
    check = checks.auth(home, workspace, {"GEMINI_API_KEY": SECRET})
    assert (check.status, check.summary, check.details) == (
        "ok",
        "gemini-api-key (from GEMINI_API_KEY)",
        ("GEMINI_API_KEY is set in the environment",),
    )
    (workspace.parent / ".env").write_text(f"export GEMINI_API_KEY='{SECRET}'\n")
    check = checks.auth(home, workspace, {})
    assert check.status == "ok"
    assert check.details == (f"GEMINI_API_KEY is set in {workspace.parent / '.env'}",)
    assert SECRET not in repr(check)


def test_the_configured_method_wins_and_must_have_what_it_needs(
    home: Path, workspace: Path
) -> None:
    settings(home, {"security": {"auth": {"selectedType": "oauth-personal"}}})
    check = checks.auth(home, workspace, {"GEMINI_API_KEY": SECRET})
    assert check.status == "fail"
    assert check.summary.startswith("oauth-personal (from security.auth.selectedType in ")
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    assert checks.auth(home, workspace, {}).status == "ok"
    settings(home, {"security": {"auth": {"selectedType": "vertex-ai"}}})
    assert checks.auth(home, workspace, {}).status == "fail"
    assert checks.auth(home, workspace, {"GOOGLE_API_KEY": SECRET}).status == "ok"
    settings(home, {"security": {"auth": {"selectedType": "gemini-api-key"}}})
    assert checks.auth(home, workspace, {}).status == "warn"  # the keychain may hold one


def test_environment_flags_pick_the_method_in_gemini_s_order(home: Path, workspace: Path) -> None:
    env = {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GEMINI_API_KEY": SECRET}
    assert checks.auth(home, workspace, env).summary.startswith("vertex-ai (from GOOGLE_GENAI_")
    env = {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1", "GEMINI_API_KEY": SECRET}
    assert checks.auth(home, workspace, env).summary == "gateway (from GOOGLE_GEMINI_BASE_URL)"


def test_an_untrusted_workspace_fails_and_each_way_of_trusting_it_passes(
    home: Path, workspace: Path
) -> None:
    check = checks.trust(home, workspace, {})
    assert (check.status, check.summary) == (
        "fail",
        f"{workspace} is not trusted: headless runs here exit 55",
    )
    assert checks.trust(home, workspace, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}).status == "ok"
    rules = home / ".gemini" / "trustedFolders.json"
    rules.write_text(json.dumps({str(workspace / "other"): "TRUST_PARENT"}))
    assert checks.trust(home, workspace, {}).status == "ok"
    rules.write_text(
        json.dumps({str(workspace.parent): "TRUST_FOLDER", str(workspace): "DO_NOT_TRUST"})
    )
    assert (
        checks.trust(home, workspace, {}).summary
        == f"{workspace} is marked DO_NOT_TRUST: headless runs here exit 55"
    )
    rules.write_text("{ not json")
    assert (
        checks.trust(home, workspace, {}).summary
        == "the trusted folders file does not load (exit 52)"
    )
    settings(home, {"security": {"folderTrust": {"enabled": False}}})
    assert checks.trust(home, workspace, {}).status == "ok"
    assert checks.trust(home, workspace, {"GEMINI_RESTRICTED_MODE": "true"}).status == "fail"


def test_retention_warns_until_it_is_off(home: Path, workspace: Path) -> None:
    assert checks.retention(home, workspace).status == "warn"
    settings(home, {"general": {"sessionRetention": {"enabled": False}}})
    check = checks.retention(home, workspace)
    assert (check.status, check.summary) == (
        "ok",
        f"cleanup is off ({home / '.gemini' / 'settings.json'})",
    )
    (workspace / ".gemini").mkdir()
    (workspace / ".gemini" / "settings.json").write_text(
        '{"general": {"sessionRetention": {"enabled": true}}} // the workspace wins'
    )
    assert checks.retention(home, workspace).status == "warn"


def test_a_home_with_broken_settings_fails(home: Path) -> None:
    assert checks.gemini_home(home, "GEMINI_CLI_HOME").status == "ok"
    (home / ".gemini" / "settings.json").write_text('{"general": ')
    check = checks.gemini_home(home, "GEMINI_CLI_HOME")
    assert check.status == "fail"
    assert "is not valid JSON" in check.details[0]
    assert checks.gemini_home(home / "elsewhere", "--gemini-home").status == "warn"
