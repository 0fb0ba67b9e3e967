"""``gemwire ... | head``: when the reader of stdout goes away, gemwire stops quietly (141)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.cli.exit_codes import EXIT_BROKEN_PIPE
from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text, pinned_gemini

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
LINES = 20_000


def read_a_little_then_leave(argv: list[str], **kwargs: object) -> tuple[int, str]:
    """Start ``argv``, read a few bytes of its stdout as ``head -c`` would, close it."""
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kwargs,  # type: ignore[call-overload]
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.read(100)
        process.stdout.close()
        stderr = process.stderr.read().decode()
        return process.wait(timeout=120), stderr


@pytest.fixture(scope="module")
def long_stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stream-json capture whose answer is far longer than a pipe holds."""
    path = tmp_path_factory.mktemp("capture") / "long.jsonl"
    records: list[dict[str, object]] = [
        {"type": "init", "timestamp": "t", "session_id": "s", "model": "auto"}
    ]
    records += [
        {"type": "message", "timestamp": "t", "role": "assistant", "content": f"line {i}\n"}
        | {"delta": True}
        for i in range(LINES)
    ]
    records.append({"type": "result", "timestamp": "t", "status": "success"})
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["plain", "json"])
def test_replay_into_a_closed_pipe_exits_quietly(long_stream: Path, flags: list[str]) -> None:
    status, stderr = read_a_little_then_leave([GEMWIRE, "replay", *flags, str(long_stream)])
    assert (status, stderr) == (EXIT_BROKEN_PIPE, "")


@pytest.mark.e2e
def test_run_into_a_closed_pipe_exits_quietly_and_stops_the_cli(tmp_path: Path) -> None:
    answer = Text("".join(f"line {i} of a long answer\n" for i in range(LINES)))
    with (
        ScriptedModel(Scenario(turns=[Reply([answer])])) as model,
        IsolatedGemini(model.url, root=tmp_path) as home,
    ):
        env = home.environ({"PATH": f"{pinned_gemini().parent}{os.pathsep}{os.environ['PATH']}"})
        status, stderr = read_a_little_then_leave(
            [GEMWIRE, "run", "say it all"], cwd=home.workspace, env=env
        )
        assert (status, stderr) == (EXIT_BROKEN_PIPE, "")
        assert home.live_processes() == []
