"""``gemwire serve``'s token: from a file or the environment, strong beyond loopback, its
login URL encoded, masked in the logs however encoded, and never passed on to agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner

from gemwire.cli import main

TOKEN = "a/b+c d%e-0123456789"
"""A token with the characters a URL encodes."""


@pytest.mark.parametrize(
    ("token", "why"),
    [
        (" ", "with a token of 1 characters (at least 16)"),
        ("short-token", "with a token of 11 characters (at least 16)"),
        ("a token with spaces in it", "with a token holding white space"),
        ("x" * 32, "with a token of one character repeated"),
    ],
)
def test_a_weak_token_is_refused_beyond_loopback(token: str, why: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["serve", "--host", "0.0.0.0", "--state-dir", str(tmp_path)],
        env={"GEMWIRE_TOKEN": token},
    )
    assert result.exit_code == 2
    assert result.output == (
        f"gemwire serve: refusing to bind 0.0.0.0 (not loopback) {why}: give a strong one "
        "in GEMWIRE_TOKEN or --token-file\n"
    )


def test_the_token_is_given_once(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("Zq3-v9PmX_t2rLk8wE5y\n")
    result = CliRunner().invoke(
        main,
        ["serve", "--token-file", str(tmp_path / "token"), "--state-dir", str(tmp_path)],
        env={"GEMWIRE_TOKEN": "Zq3-v9PmX_t2rLk8wE5y"},
    )
    assert result.exit_code == 2
    assert "give the token once: --token-file, or --token/GEMWIRE_TOKEN" in result.output


ENV_DUMP = "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))"


def test_a_token_file_an_encoded_url_masked_logs_and_agents_without_it(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN + "\n")
    (tmp_path / "work").mkdir()
    dumped = tmp_path / "agent-env.json"
    agent = f"dump={sys.executable} -c {json.dumps(ENV_DUMP)} {dumped}"
    process = subprocess.Popen(
        [sys.executable, "-m", "gemwire", "serve", "--port", "0", "--root",
         str(tmp_path / "work"), "--state-dir", str(tmp_path / "state"),
         "--token-file", str(tmp_path / "token"), "--agent", agent],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GEMWIRE_TOKEN": ""},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        base, _, query = line.removeprefix("gemwire serve: ").strip().partition("/?")
        assert query == f"token={quote(TOKEN, safe='')}"
        login = httpx.get(f"{base}/?{query}", timeout=30)
        assert login.status_code == 303
        headers = {"Authorization": f"Bearer {TOKEN}"}
        body = {"agent": "dump", "cwd": str(tmp_path / "work")}
        httpx.post(f"{base}/v1/sessions", json=body, headers=headers, timeout=60)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert quote(TOKEN, safe="") not in stderr
    assert 'GET /?token=*** HTTP/1.1" 303' in stderr
    environment = json.loads(dumped.read_text())
    assert "GEMWIRE_TOKEN" not in environment
    assert TOKEN not in json.dumps(environment)
