"""Gemini CLI 0.61.0's headless flags that `GeminiOptions` types, against the real CLI and the
scripted model: each one seen taking effect."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from gemwire import RunResult, run_gemini, run_gemini_sync
from gemwire.cli import main
from gemwire.events import Event, ToolCallFinished, ToolCallStarted
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)
from gemwire.wire.acp import McpServerStdio

pytestmark = [pytest.mark.e2e]


def run(
    scenario: Scenario, prompt: str, root: Path, *, trusted: bool = True, **options: object
) -> tuple[RunResult, IsolatedGemini, ScriptedModel]:
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files, root=root)
        environ = env.environ()
        if not trusted:
            environ.pop("GEMINI_CLI_TRUST_WORKSPACE", None)
        result = run_gemini_sync(prompt, env.gemini_options(env=environ, **options))
        assert env.live_processes() == []
    return result, env, model


def test_skip_trust_runs_in_a_folder_nobody_trusted(tmp_path: Path) -> None:
    untrusted, _, _ = run(Scenario(turns=[]), "hi", tmp_path / "a", trusted=False)
    assert untrusted.error is not None
    assert untrusted.error.kind == "untrusted"
    result, _, _ = run(
        Scenario(turns=[Reply([Text("Trusted.")])]),
        "hi",
        tmp_path / "b",
        trusted=False,
        skip_trust=True,
    )
    assert (result.ok, result.answer) == (True, "Trusted.")


def test_raw_output_lets_escapes_through(tmp_path: Path) -> None:
    red = "\x1b[31mred\x1b[0m"
    sanitized, _, _ = run(Scenario(turns=[Reply([Text(red)])]), "hi", tmp_path / "a")
    raw, _, _ = run(Scenario(turns=[Reply([Text(red)])]), "hi", tmp_path / "b", raw_output=True)
    assert "\x1b" not in sanitized.answer
    assert raw.answer == red


def test_session_file_continues_the_session_saved_there(tmp_path: Path) -> None:
    first, env, _ = run(Scenario(turns=[Reply([Text("Noted.")])]), "remember 42", tmp_path)
    assert first.ok, first
    [saved] = (env.home / ".gemini" / "tmp").rglob("chats/session-*.jsonl")
    copy = tmp_path / "elsewhere.jsonl"
    copy.write_bytes(saved.read_bytes())
    with ScriptedModel(Scenario(turns=[Reply([Text("It was 42.")])])) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "second")
        result = run_gemini_sync("what was it?", env.gemini_options(session_file=str(copy)))
        requests = [r for r in model.requests if r.turn is not None]
    assert (result.ok, result.answer) == (True, "It was 42.")
    assert "remember 42" in json.dumps(requests[0].body)


def in_a_git_worktree(root: Path, name: str) -> tuple[RunResult, IsolatedGemini]:
    write = FunctionCall("write_file", {"file_path": "new.txt", "content": "new\n"})
    scenario = Scenario(files={"a.txt": "a\n"}, turns=[Reply([write]), Reply([Text("Written.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(
            model.url,
            files=scenario.files,
            root=root,
            settings={"experimental": {"worktrees": True}},
        )
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(env.workspace)]
        for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "seed"]):
            subprocess.run([*git, *args], check=True, env=env.environ())
        options = env.gemini_options(worktree=name, approval_mode="yolo")
        result = run_gemini_sync("go", options)
        assert env.live_processes() == []
    return result, env


def test_worktree_runs_in_a_new_git_worktree(tmp_path: Path) -> None:
    result, env = in_a_git_worktree(tmp_path, "wt")
    assert (result.ok, result.answer) == (True, "Written."), result
    worktree = env.workspace / ".gemini" / "worktrees" / "wt"
    assert (worktree / "new.txt").read_text() == "new\n"
    assert not (env.workspace / "new.txt").exists()


def test_a_worktree_name_starting_with_a_dash_is_the_name(tmp_path: Path) -> None:
    """``--worktree -x`` was the flag without a value, then ``-x``: a worktree of a generated
    name, then "Unknown argument: x". gemwire passes ``--worktree=-x``."""
    result, env = in_a_git_worktree(tmp_path, "-x")
    assert (result.ok, result.answer) == (True, "Written."), result
    assert [p.name for p in (env.workspace / ".gemini" / "worktrees").iterdir()] == ["-x"]


def test_an_admin_policy_denies_what_yolo_would_allow(tmp_path: Path) -> None:
    policy = tmp_path / "admin.toml"
    policy.write_text('[[rule]]\ntoolName = "write_file"\ndecision = "deny"\npriority = 900\n')
    write = FunctionCall("write_file", {"file_path": "new.txt", "content": "new\n"})
    scenario = Scenario(turns=[Reply([write]), Reply([Text("Done.")])])
    allowed, env, _ = run(scenario, "go", tmp_path / "a", approval_mode="yolo")
    assert (env.workspace / "new.txt").exists()
    denied, env, _ = run(
        scenario, "go", tmp_path / "b", approval_mode="yolo", admin_policy_files=(str(policy),)
    )
    assert not (env.workspace / "new.txt").exists()
    # The same flag as an extra argument: passed on as given.
    extra = ("--admin-policy", str(policy))
    by_extra, env, _ = run(scenario, "go", tmp_path / "c", approval_mode="yolo", extra_args=extra)
    assert not (env.workspace / "new.txt").exists()
    assert (allowed.ok, denied.ok, by_extra.ok) == (True, True, True)


def test_only_the_allowed_mcp_servers_are_started(tmp_path: Path) -> None:
    server = Path(__file__).with_name("mcp_tiny.py")
    servers = {n: {"command": sys.executable, "args": [str(server), n]} for n in ("one", "two")}
    declared: dict[str, list[str]] = {}
    for case, allowed in (("one", ("one",)), ("two", ("two",)), ("both", ("one", "two"))):
        with ScriptedModel(Scenario(turns=[Reply([Text("Hi.")])])) as model:
            env = IsolatedGemini(model.url, root=tmp_path / case, settings={"mcpServers": servers})
            result = run_gemini_sync("hi", env.gemini_options(allowed_mcp_server_names=allowed))
            assert result.ok, result
            [request] = [r for r in model.requests if r.turn is not None]
            declared[case] = sorted(
                d for d in request.function_declarations() if d.endswith("_tool")
            )
    assert declared == {
        "one": ["mcp_one_one_tool"],
        "two": ["mcp_two_two_tool"],
        "both": ["mcp_one_one_tool", "mcp_two_two_tool"],
    }


def test_mcp_servers_given_to_one_run_are_used_and_the_user_settings_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run's own home is made in the temporary folder: this test's own, where no other
    # test (or a parallel run of the suite) makes one meanwhile.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    tiny = Path(__file__).with_name("mcp_tiny.py")
    own = {"own": {"command": sys.executable, "args": [str(tiny), "own"]}}
    given = McpServerStdio(name="given", command=sys.executable, args=[str(tiny), "given"])
    call = FunctionCall("mcp_given_given_tool", {})
    scenario = Scenario(turns=[Reply([call]), Reply([Text("It said hi.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path, settings={"mcpServers": own})
        before = env.settings_path.read_bytes()
        events: list[Event] = []

        async def main() -> RunResult:
            options = env.gemini_options(mcp_servers=(given,), approval_mode="yolo")
            async with run_gemini("hi", options) as running:
                events.extend([event async for event in running])
            return running.result

        result = anyio.run(main)
        assert env.live_processes() == []
        first = next(r for r in model.requests if r.turn is not None)
    assert (result.ok, result.answer) == (True, "It said hi."), result
    declared = sorted(d for d in first.function_declarations() if d.endswith("_tool"))
    assert declared == ["mcp_given_given_tool", "mcp_own_own_tool"]
    [started] = [e for e in events if isinstance(e, ToolCallStarted)]
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (started.mcp_server, started.mcp_tool) == ("given", "given_tool")
    assert (finished.call_id, finished.status, finished.output) == (
        started.call_id,
        "completed",
        "given says hi",
    )
    assert env.settings_path.read_bytes() == before
    # The session landed in the user's home, and the run's own home is gone.
    assert len(env.session_files()) == 1
    assert list(temporary.glob("gemwire-home-*")) == []


def test_a_system_prompt_file_is_what_the_model_is_told(tmp_path: Path) -> None:
    (tmp_path / "pirate.md").write_text("You are a terse pirate.\n")
    scenario = Scenario(turns=[Reply([Text("Arr.")])])
    told = {}
    for case, file in (("own", "../../pirate.md"), ("builtin", None)):
        result, _, model = run(scenario, "hi", tmp_path / case, system_prompt_file=file)
        assert (result.ok, result.answer) == (True, "Arr."), result
        [request] = [r for r in model.requests if r.turn is not None]
        told[case] = "".join(p["text"] for p in request.body["systemInstruction"]["parts"])
    assert told["own"] == "You are a terse pirate."  # the CLI trims the file's text
    assert told["builtin"].startswith("You are Gemini CLI")


def test_gemwire_run_takes_mcp_servers_from_a_file(tmp_path: Path) -> None:
    tiny = Path(__file__).with_name("mcp_tiny.py")
    servers = {"given": {"command": sys.executable, "args": [str(tiny), "given"]}}
    (tmp_path / "servers.json").write_text(json.dumps(servers))
    call = FunctionCall("mcp_given_given_tool", {})
    scenario = Scenario(turns=[Reply([call]), Reply([Text("It said hi.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "run")
        argv = ["run", "--cwd", str(env.workspace), "--executable", str(pinned_gemini())]
        argv += ["--json", "-y", "--mcp-servers", str(tmp_path / "servers.json"), "hi"]
        ran = CliRunner().invoke(main, argv, env=env.environ())
        assert env.live_processes() == []
    assert ran.exit_code == 0, ran.stderr
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    [started] = [e for e in events if e["type"] == "tool_call_started"]
    [finished] = [e for e in events if e["type"] == "tool_call_finished"]
    assert (started["mcp_server"], started["mcp_tool"]) == ("given", "given_tool")
    assert (finished["status"], finished["output"]) == ("completed", "given says hi")
    assert (events[-1]["type"], events[-1]["answer"]) == ("turn_completed", "It said hi.")
