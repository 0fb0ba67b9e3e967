"""`gemwire doctor --json`: the same checks as one JSON document (schema: docs/cli.md)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gemwire.cli import main


def test_doctor_json_is_one_document_of_every_check(tmp_path: Path) -> None:
    env = {
        "GEMWIRE_CONFIG": str(tmp_path / "none.toml"),
        "GEMWIRE_CLIS_DIR": str(tmp_path),  # no pinned CLI or agent
        "GEMINI_CLI_HOME": str(tmp_path),
        "PATH": str(tmp_path),  # no node, no gemini, no agent
        "HOME": str(tmp_path),
    }
    for name in ("CLAUDE", "CODEX", "QWEN", "OPENCODE", "GEMINI", "ANTIGRAVITY"):
        env[f"GEMWIRE_AGENT_{name}"] = ""
    args = ["doctor", "--json", "--executable", str(tmp_path / "gemini"), "--cwd", str(tmp_path)]
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert list(document) == ["ok", "checks"]
    assert document["ok"] is False
    checks = document["checks"]
    assert [(c["name"], c["status"]) for c in checks] == [
        ("gemwire config", "ok"),
        ("Gemini CLI", "fail"),
        ("Node.js", "fail"),
        ("Gemini home", "warn"),
        ("auth", "fail"),
        ("folder trust", "fail"),
        ("session retention", "warn"),
        ("agent claude", "warn"),
        ("agent codex", "warn"),
        ("agent qwen", "warn"),
        ("agent opencode", "warn"),
        ("agent gemini", "warn"),
        ("agent antigravity", "warn"),
    ]
    assert checks[2] == {
        "name": "Node.js",
        "status": "fail",
        "summary": "node is not on PATH",
        "details": [],
        "fix": "install Node.js 20.0 or newer",
    }
    assert all(list(c) == ["name", "status", "summary", "details", "fix"] for c in checks)
    human = CliRunner().invoke(main, args[:1] + args[2:], env=env)
    assert human.exit_code == 1
    assert [line[2:20].strip() for line in human.stdout.splitlines() if line[:1] in "✓!✗"] == [
        c["name"] for c in checks
    ]
