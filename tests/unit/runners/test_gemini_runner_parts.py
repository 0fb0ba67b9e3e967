from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemwire import GeminiExecutable, GeminiOptions, ResumeToken, find_gemini, parse_resume_line
from gemwire.errors import (
    RUN_FAILURES,
    AuthFailed,
    GeminiNotFound,
    QuotaExhausted,
    RateLimited,
    RunFailed,
    RunTimedOut,
    UnsupportedVersion,
)
from gemwire.events import ERROR_KINDS
from gemwire.runners.gemini_options import build_argv

GEMINI = GeminiExecutable(path="/bin/gemini", version="0.61.0", source="explicit")


def test_argv_mirrors_the_options_and_never_carries_the_prompt() -> None:
    options = GeminiOptions(
        model="pro",
        approval_mode="auto_edit",
        sandbox=True,
        include_directories=("../lib", "/abs"),
        policy_files=("p.toml",),
        allowed_tools=("run_shell_command(echo)", "read_file"),
        extensions=("ext1",),
        resume="latest",
        session_id="my-id",
    )
    assert build_argv(GEMINI, options) == [
        "/bin/gemini",
        "--output-format",
        "stream-json",
        "--model",
        "pro",
        "--approval-mode",
        "auto_edit",
        "--sandbox",
        "--include-directories",
        "../lib",
        "--include-directories",
        "/abs",
        "--policy",
        "p.toml",
        "--allowed-tools",
        "run_shell_command(echo),read_file",
        "--extensions",
        "ext1",
        "--resume",
        "latest",
        "--session-id",
        "my-id",
    ]
    assert build_argv(GEMINI, GeminiOptions()) == ["/bin/gemini", "--output-format", "stream-json"]


def test_before_0_30_resume_gets_a_blank_prompt_flag_and_the_prompt_stays_on_stdin() -> None:
    old = GeminiExecutable(path="/bin/gemini", version="0.15.4", source="explicit")
    assert build_argv(old, GeminiOptions(resume="latest"))[-4:] == [
        "--resume",
        "latest",
        "--prompt",
        " ",
    ]
    assert build_argv(GEMINI, GeminiOptions(resume="latest"))[-2:] == ["--resume", "latest"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "To continue: gemini --resume 5e1e1ecd-164d-4edb-8d9a-19ebc72a8213",
            "5e1e1ecd-164d-4edb-8d9a-19ebc72a8213",
        ),
        ("`gemini -r abc` then later `gemini --resume my_id-2`", "my_id-2"),
        ("no resume here; gemini --help", None),
    ],
)
def test_parse_resume_line(text: str, expected: str | None) -> None:
    token = parse_resume_line(text)
    assert (token.value if token else None) == expected
    if token:
        assert token == ResumeToken(engine="gemini", value=expected or "")
        assert parse_resume_line(token.command) == token


def install(folder: Path, version: str) -> Path:
    package = folder / "node_modules" / "@google" / "gemini-cli"
    (package / "bundle").mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "@google/gemini-cli", "version": version})
    )
    script = package / "bundle" / "gemini.js"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    bin_dir = folder / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").symlink_to("../@google/gemini-cli/bundle/gemini.js")
    return bin_dir / "gemini"


def test_a_project_local_install_is_found_from_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_CLI_PATH", raising=False)
    launcher = install(tmp_path, "0.61.0")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    found = find_gemini(cwd=str(tmp_path / "src" / "deep"))
    assert (found.path, found.version, found.source) == (str(launcher), "0.61.0", "node_modules")
    assert not found.newer_than_tested


def test_explicit_beats_the_environment_which_beats_node_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = install(tmp_path / "project", "0.30.0")
    configured = install(tmp_path / "configured", "0.61.0")
    explicit = install(tmp_path / "explicit", "0.99.1")
    monkeypatch.setenv("GEMINI_CLI_PATH", str(configured))
    assert find_gemini(cwd=str(local.parents[2])).source == "GEMINI_CLI_PATH"
    found = find_gemini(str(explicit), cwd=str(local.parents[2]))
    assert (found.source, found.version, found.newer_than_tested) == ("explicit", "0.99.1", True)


def test_too_old_is_refused_with_the_install_command(tmp_path: Path) -> None:
    old = install(tmp_path, "0.9.0")
    with pytest.raises(
        UnsupportedVersion,
        match=r"0\.9\.0 .* older than 0\.15\.4.*npm install -g @google/gemini-cli",
    ):
        find_gemini(str(old))


def test_nothing_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_CLI_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("gemwire.runners.discovery._COMMON_LOCATIONS", ())
    with pytest.raises(GeminiNotFound) as caught:
        find_gemini(cwd=str(tmp_path))
    assert str(caught.value).endswith("Install it: npm install -g @google/gemini-cli")


def test_every_error_kind_has_its_exception() -> None:
    assert set(RUN_FAILURES) == set(ERROR_KINDS) - {"not_found"}
    assert issubclass(QuotaExhausted, RateLimited)
    assert issubclass(RunTimedOut, TimeoutError)
    error = AuthFailed("bad key", exit_code=41)
    copy = type(error)(*error.args)
    assert (str(copy), isinstance(copy, RunFailed), error.kind) == ("bad key", True, "auth")
