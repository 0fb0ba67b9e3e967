"""`gemwire run --server` against `gemwire serve` (a process of its own) with the real
`gemini --acp` and the scripted model: it prints what the same turn run here prints."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from kit.write_a import WRITE, diff_of_a

from gemwire.testing import (
    Hang,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)
from gemwire.testing.environment import live_processes

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


@contextmanager
def serving(env: IsolatedGemini, state: Path) -> Iterator[str]:
    """``gemwire serve --port 0`` in ``env``: the URL it prints (with its token)."""
    with server_process(env, state) as (url, _):
        yield url


@contextmanager
def server_process(
    env: IsolatedGemini, state: Path, *options: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`serving` (with more ``options``), and the server's process."""
    argv = [GEMWIRE, "serve", "--port", "0", "--root", str(env.workspace), *options]
    argv.append("--state-dir")
    with (
        (state.parent / "serve.log").open("w") as log,
        subprocess.Popen(
            [*argv, str(state)], stdout=subprocess.PIPE, stderr=log, env=env.environ(), text=True
        ) as process,
    ):
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert re.fullmatch(r"gemwire serve: http://127\.0\.0\.1:\d+/\?token=\S+\n", line)
            yield line.removeprefix("gemwire serve: ").strip(), process
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0


def run(argv: list[str], env: IsolatedGemini, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env={**env.environ(), **extra},
        cwd=env.workspace,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def remotely(
    tmp_path: Path, *args: str, with_token_in: str = "url"
) -> tuple[subprocess.CompletedProcess[str], IsolatedGemini]:
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "remote")
        with serving(env, tmp_path / "remote" / "state") as url:
            base, _, token = url.partition("/?token=")
            if with_token_in == "url":
                done = run([GEMWIRE, "run", "--server", url, *args], env)
            else:
                done = run([GEMWIRE, "run", "--server", base, *args], env, GEMWIRE_TOKEN=token)
    return done, env


def locally(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], IsolatedGemini]:
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "local")
        argv = [GEMWIRE, "acp", *args, "--cwd", str(env.workspace), "--"]
        done = run([*argv, *pinned_gemini_command(), "--acp"], env)
    return done, env


def same_run(output: str, env: IsolatedGemini) -> list[dict[str, object]]:
    """The events of ``output`` without what differs between two runs: ids, durations,
    the workspace's path, the tool call ids Gemini CLI makes from the time."""
    text = re.sub(r"_\d{13}_", "_T_", output.replace(str(env.workspace), "WS"))
    varying = {"session_id", "duration_ms", "request_id"}
    events = [json.loads(line) for line in text.splitlines()]
    # Gemini CLI announces its commands a moment after session/new: before the prompt or
    # after it, as the timing falls. It is checked apart.
    announced = [e for e in events if e.get("update") == "available_commands_update"]
    assert len(announced) == 1
    return [{k: v for k, v in e.items() if k not in varying} for e in events if e not in announced]


def test_json_events_are_those_of_a_local_run(tmp_path: Path) -> None:
    done, env = remotely(tmp_path, "--json", "-y", "write a")
    assert (done.returncode, done.stderr) == (0, "")
    local, local_env = locally(tmp_path, "--json", "--permissions", "all", "write a")
    assert local.returncode == 0
    events = same_run(done.stdout, env)
    assert events == same_run(local.stdout, local_env)
    assert events[-1]["type"] == "turn_completed"
    assert (events[-1]["ok"], events[-1]["answer"]) == (True, "Writing.\n\nDone.")
    resolved = [e["option_id"] for e in events if e["type"] == "permission_resolved"]
    assert resolved == ["proceed_once"]
    assert (env.workspace / "a.txt").read_text() == "a\n"


def sessions_on(url: str) -> list[dict[str, Any]]:
    base, _, token = url.partition("/?token=")
    answer = httpx.get(f"{base}/v1/sessions", headers={"Authorization": f"Bearer {token}"})
    answer.raise_for_status()
    sessions: list[dict[str, Any]] = answer.json()["sessions"]
    return sessions


def agents_of(env: IsolatedGemini, server: subprocess.Popen[str]) -> list[int]:
    """The processes started in ``env`` other than the server: its agents (looked for
    again for a few seconds while any is found, as one stopped a moment ago may still be
    exiting)."""
    deadline = time.monotonic() + 10
    while True:
        found = [pid for pid in live_processes(f"{env.TAG}={env.home}", 0) if pid != server.pid]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_a_run_closes_its_session_on_the_server(tmp_path: Path) -> None:
    # Each run left an idle agent (~150 MiB) until --idle-timeout: with --max-sessions 2,
    # the third run was refused (429).
    with ScriptedModel(Scenario(turns=[Reply([Text("Done.")], repeat=3)])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        state = tmp_path / "state"
        with server_process(env, state, "--max-sessions", "2") as (url, server):
            runs = [run([GEMWIRE, "run", "--server", url, "-q", "go"], env) for _ in range(3)]
            assert [(r.returncode, r.stdout, r.stderr) for r in runs] == [(0, "Done.\n", "")] * 3
            assert [s["status"] for s in sessions_on(url)] == ["closed"] * 3
            assert agents_of(env, server) == []


def test_a_gemini_turn_over_acp_has_its_cost_estimate(tmp_path: Path) -> None:
    # Only stream-json runs were priced: over ACP the turn had its tokens and no cost.
    with ScriptedModel(Scenario(turns=[Reply([Text("Done.")])])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        with serving(env, tmp_path / "state") as url:
            done = run(
                [GEMWIRE, "run", "--server", url, "-m", "gemini-2.5-pro", "--json", "go"], env
            )
    assert (done.returncode, done.stderr) == (0, "")
    usage = json.loads(done.stdout.splitlines()[-1])["usage"]
    assert usage["by_model"].keys() == {"gemini-2.5-pro"}
    # 100 tokens in at $1.25 and 10 out at $10 a million (gemwire's price table)
    assert (usage["cost_usd"], usage["context_window"]) == (pytest.approx(0.000225), 1048576)


def test_the_plain_view_denying_by_default_with_the_token_from_the_environment(
    tmp_path: Path,
) -> None:
    done, env = remotely(tmp_path, "write a", with_token_in="env")
    local, local_env = locally(tmp_path, "--permissions", "deny", "write a")
    assert (done.returncode, done.stderr) == (0, "")

    def same(output: str, env: IsolatedGemini) -> str:
        text = re.sub(r"\b\d+(?:\.\d+)? s\b", "_ s", output.replace(str(env.workspace), "WS"))
        return re.sub(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", "ID", text)

    assert same(done.stdout, env) == same(local.stdout, local_env)
    lines = done.stdout.splitlines()
    assert "  ? permission: Reject" in lines
    assert lines[-1].startswith("-- ok (end_turn)")
    assert not (env.workspace / "a.txt").exists()


def test_a_wrong_token_and_an_unknown_agent_are_one_line_each(tmp_path: Path) -> None:
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        with serving(env, tmp_path / "state") as url:
            base = url.partition("/?token=")[0]
            wrong = run([GEMWIRE, "run", "--server", base, "--token", "wrong", "hi"], env)
            unknown = run([GEMWIRE, "run", "--server", url, "--agent", "nope", "hi"], env)
            outside = run([GEMWIRE, "run", "--server", url, "--cwd", str(tmp_path), "hi"], env)
    # A folder outside the server's roots is a usage error, not a refused key.
    assert (outside.returncode, outside.stdout) == (2, "")
    assert outside.stderr == (
        f"gemwire: POST /v1/sessions: 403 '{tmp_path}' is outside the server's roots "
        f"({env.workspace})\n"
    )
    assert (wrong.returncode, wrong.stdout) == (5, "")  # as a refused key: EXIT_AUTH
    assert wrong.stderr == "gemwire: POST /v1/sessions: 401 missing or wrong token\n"
    assert (unknown.returncode, unknown.stdout) == (4, "")
    assert unknown.stderr.startswith("gemwire: POST /v1/sessions: 404 unknown agent 'nope'; ")
    assert unknown.stderr.count("\n") == 1


def on_a_terminal(
    tmp_path: Path, terminal: Callable[..., Any], key: bytes | signal.Signals
) -> tuple[Any, IsolatedGemini]:
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        with server_process(env, tmp_path / "state") as (url, server):
            environ = env.environ()
            environ.pop("NO_COLOR", None)
            argv = [GEMWIRE, "run", "--server", url, "--cwd", str(env.workspace), "write a"]
            screen = terminal(argv, environ, keys=[(b"Esc cancels", key)])
            assert [s["status"] for s in sessions_on(url)] == ["closed"]  # Ctrl-C too
            assert agents_of(env, server) == []
    return screen, env


def test_a_person_answers_the_servers_permission_request_at_the_keyboard(
    tmp_path: Path, terminal: Callable[..., Any]
) -> None:
    screen, env = on_a_terminal(tmp_path, terminal, b"y")
    assert screen.exit_code == 0
    lines = screen.lines
    start = lines.index("? acp:gemini-cli asks permission for Writing to a.txt")
    # The change asked about, then the options the agent offered.
    assert lines[start + 1 : start + 7] == [
        *diff_of_a(env),
        "  1 Allow for this session   2 Allow   3 Reject",
        "    → Allow",
    ]
    assert (env.workspace / "a.txt").read_text() == "a\n"
    assert "Done." in lines


def test_ctrl_c_at_the_prompt_cancels_the_turn_on_the_server_and_exits_130(
    tmp_path: Path, terminal: Callable[..., Any]
) -> None:
    screen, env = on_a_terminal(tmp_path, terminal, signal.SIGINT)
    assert screen.exit_code == 130
    assert "Traceback" not in screen.text
    lines = screen.lines
    start = lines.index("? acp:gemini-cli asks permission for Writing to a.txt")
    assert lines[start + 1 : start + 7] == [
        *diff_of_a(env),
        "  1 Allow for this session   2 Allow   3 Reject",
        "    → cancelled",
    ]
    assert lines[-2].startswith("✗ failed (cancelled) · 1 tool call · ")
    assert not (env.workspace / "a.txt").exists()


def test_a_server_lost_mid_turn_still_ends_the_json_with_one_turn_completed(
    tmp_path: Path,
) -> None:
    stalls = Scenario(turns=[Reply([Text("Working."), Hang()])])
    with ScriptedModel(stalls) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [GEMWIRE, "serve", "--port", "0", "--root", str(env.workspace), "--state-dir"]
        with subprocess.Popen(
            [*argv, str(tmp_path / "state")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env.environ(),
            text=True,
        ) as server:
            try:
                assert server.stdout is not None
                url = server.stdout.readline().removeprefix("gemwire serve: ").strip()
                with subprocess.Popen(
                    [GEMWIRE, "run", "--server", url, "--json", "go"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env.environ(),
                    text=True,
                ) as client:
                    assert client.stdout is not None
                    lines = [client.stdout.readline()]
                    while lines[-1] and '"message_delta"' not in lines[-1]:
                        lines.append(client.stdout.readline())
                    server.kill()  # no shutdown in order: the connection just goes
                    out, err = client.communicate(timeout=60)
            finally:
                server.kill()
    events = [json.loads(line) for line in [*lines, *out.splitlines()] if line]
    assert [e["type"] for e in events].count("turn_completed") == 1
    assert "message_delta" in [e["type"] for e in events]
    last = events[-1]
    assert (last["type"], last["ok"], last["stop_reason"]) == ("turn_completed", False, "error")
    assert last["error"]["kind"] == "crashed"
    assert "the event stream dropped and 5 reconnections failed" in last["error"]["message"]
    assert client.returncode == 1  # crashed
    assert err == ""


def test_a_server_shut_down_mid_turn_is_the_same_failure_for_run_and_acp_connect(
    tmp_path: Path,
) -> None:
    """SIGTERM to the server is not the user's Ctrl-C: `run --server` ended `cancelled`
    (exit 130), `acp --connect` `crashed` (exit 1); now both say the server went away."""
    stalls = Scenario(turns=[Reply([Text("Working."), Hang()], repeat=2)])
    with ScriptedModel(stalls) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        with server_process(env, tmp_path / "state") as (url, server):
            endpoint = url.replace("http://", "ws://").replace("/?token=", "/acp/gemini?token=")
            argvs = [
                [GEMWIRE, "run", "--server", url, "--json", "go"],
                [
                    GEMWIRE,
                    "acp",
                    "--connect",
                    endpoint,
                    "--cwd",
                    str(env.workspace),
                    "--json",
                    "go",
                ],
            ]
            clients = [
                subprocess.Popen(
                    argv,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env.environ(),
                    text=True,
                )
                for argv in argvs
            ]
            outputs: list[list[str]] = []
            for client in clients:
                assert client.stdout is not None
                lines = [client.stdout.readline()]
                while lines[-1] and '"message_delta"' not in lines[-1]:
                    lines.append(client.stdout.readline())
                outputs.append(lines)
            server.send_signal(signal.SIGTERM)
            for client, lines in zip(clients, outputs, strict=True):
                out, err = client.communicate(timeout=60)
                lines += out.splitlines()
                assert (client.returncode, err) == (1, "")
    ends = [json.loads(lines[-1]) for lines in outputs]
    assert [(e["type"], e["ok"], e["stop_reason"], e["answer"]) for e in ends] == [
        ("turn_completed", False, "error", "Working.")
    ] * 2
    assert [e["error"]["kind"] for e in ends] == ["crashed"] * 2
    assert [e["error"]["message"] for e in ends] == [
        "the server stopped the session (server shutdown) before the turn ended",
        (
            "the agent closed the connection (the server is shutting down (WebSocket close "
            "1001)) before answering session/prompt"
        ),
    ]
