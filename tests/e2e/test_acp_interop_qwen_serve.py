"""gemwire's own client through the seven steps (tests/acp_interop.py) against ``qwen
serve``'s ``/acp`` (Qwen Code 0.24.4, pinned in clis/qwen-code-0.24.4; an ACP server we did
not write) over WebSocket and Streamable HTTP, on the scripted model in an isolated home.
One ``qwen serve`` serves both transports. Its session/new answers
``availableModels: [{"id": ...}]`` (no ``modelId``): the part is dropped with a notice
and the session opens."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kit.acp_interop import seven_steps
from kit.ports import free_port

from gemwire.testing import Fail, FunctionCall, Hang, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import IsolatedAgent, isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TOKEN = "interop-token"


def _turns(workspace: Path, scheme: str) -> list[Reply | Fail]:
    write = FunctionCall(
        "write_file", {"file_path": str(workspace / f"{scheme}.txt"), "content": "a\n"}
    )
    return [
        Reply([Text("Hello there.")]),
        Reply([Text("Writing."), write]),
        Reply([Text("Written.")]),
        Reply([Text("Thinking"), Hang()]),
        Reply([Text("Again.")]),
    ]


@pytest.fixture
def qwen_serve(tmp_path: Path) -> Iterator[tuple[str, IsolatedAgent, ScriptedModel]]:
    workspace = tmp_path / "workspace"
    turns = [*_turns(workspace, "ws"), *_turns(workspace, "http")]
    with ScriptedModel(Scenario(turns=turns)) as model:
        env = isolated_agent("qwen", model, root=tmp_path)
        port = free_port()
        command = [env.command[0], "serve", "--hostname", "127.0.0.1", "--port", str(port)]
        command += ["--workspace", str(env.workspace), "--no-web"]
        process = subprocess.Popen(
            command,
            # Its runtime starts behind its back; on a busy machine it took longer than the
            # default and session/new failed with "Internal error".
            env=env.environ(
                {"QWEN_SERVER_TOKEN": TOKEN, "QWEN_SERVE_RUNTIME_STARTUP_TIMEOUT_MS": "120000"}
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            assert process.stdout is not None
            for line in process.stdout:  # /acp comes a moment after it listens
                if "WebSocket transport enabled" in line:
                    break
            else:
                raise AssertionError(f"qwen serve ended with {process.wait()}")
            yield f"127.0.0.1:{port}", env, model
        finally:
            process.terminate()
            process.wait(20)
            if process.stdout is not None:
                process.stdout.close()


async def test_gemwire_runs_the_seven_steps_against_qwen_serve(
    qwen_serve: tuple[str, IsolatedAgent, ScriptedModel],
) -> None:
    host, env, _ = qwen_serve
    for scheme in ("ws", "http"):
        steps = dict(await seven_steps(f"{scheme}://{host}/acp", str(env.workspace), token=TOKEN))
        assert list(steps) == [
            "initialize",
            "session/new",
            "hello",
            "permission",
            "cancel",
            "session/load",
            "prompt after load",
        ], scheme
        assert steps["initialize"] is True
        assert steps["hello"][:2] == ("end_turn", "Hello there.")
        stop, answer, events = steps["permission"]
        assert (stop, answer) == ("end_turn", "Writing.\n\nWritten.")
        kinds = [kind for kind, _ in events]
        assert kinds.index("permission_requested") < kinds.index("permission_resolved")
        assert (env.workspace / f"{scheme}.txt").read_text() == "a\n"
        assert steps["cancel"] == "cancelled"
        # qwen serve answers session/load first and replays the session after it (ACP has
        # the replay before the answer): the replay comes in the next turn.
        assert steps["session/load"] == [("session_started", None)]
        replayed = "Hello there.Writing.\n\nWritten.Thinking"
        assert steps["prompt after load"] == ("end_turn", f"{replayed}Again."), scheme
    assert sorted(os.listdir(env.workspace)) == ["http.txt", "ws.txt"]
