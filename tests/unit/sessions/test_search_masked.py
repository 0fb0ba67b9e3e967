"""`gemwire sessions search` masks secrets as the server's search route does: `search` itself
masks the environment's secret values (and any it is given) in every hit it yields."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from kit.jsonl_agents import JSONL_AGENTS, materialize

from gemwire._normalize.masking import MASK
from gemwire.cli import main
from gemwire.sessions import search

CLAUDE = next(spec for spec in JSONL_AGENTS if spec.agent == "claude")
SECRET = "made.txt make a file"  # what Claude's recorded tool input says after "touch "


def _home(tmp_path: Path) -> dict[str, str]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    materialize(CLAUDE, tmp_path / "home", workspace)
    return {
        "CODEX_HOME": "/nonexistent/.codex",
        "QWEN_HOME": "/nonexistent/.qwen",
        "QWEN_RUNTIME_DIR": "",
        "GEMINI_CLI_HOME": "/nonexistent",
        "XDG_DATA_HOME": "/nonexistent",
        "OPENCODE_DB": "",
        **CLAUDE.env(tmp_path / "home"),
    }


def _search(env: dict[str, str], *args: str) -> str:
    result = CliRunner(env=env).invoke(main, ["sessions", "search", "touch", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_cli_masks_the_environments_secrets_in_text_and_json(tmp_path: Path) -> None:
    env = _home(tmp_path)
    assert f"tool input: touch {SECRET}" in _search(env)  # shown as it is without the secret

    env["PROBE_API_KEY"] = SECRET
    shown = _search(env)
    assert SECRET not in shown
    assert f"tool input: touch {MASK}" in shown
    documents = [json.loads(line) for line in _search(env, "--json").splitlines()]
    assert documents
    assert SECRET not in json.dumps(documents)
    assert {quote["text"] for d in documents for quote in d["quotes"]} == {f"touch {MASK}"}


def test_search_masks_the_secrets_it_is_given(tmp_path: Path) -> None:
    _home(tmp_path)
    home = CLAUDE.home(tmp_path / "home")
    hits = list(search("touch", home, secrets=[SECRET]))
    assert hits
    assert {quote.text for hit in hits for quote in hit.quotes} == {f"touch {MASK}"}
