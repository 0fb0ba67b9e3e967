"""``gemwire eval --sandbox`` with an ACP agent: its own process, in the attempt's sandbox.

The agent is tests/kit/sandbox_probe_acp.py, started as ``qwen`` (a configured command):
it makes every try of the gemini path's hostile probe (tests/kit/sandbox_probe.py) with
its own hands, then asks gemwire to write outside and to run a command on the host (the
client offers neither in sandbox mode), and asks permission to edit (the preset answers).
"""

from __future__ import annotations

import json
import shlex
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from kit.sandbox_confined import assert_confined

from gemwire import GeminiOptions
from gemwire.batch import BatchOptions, Task, read_results
from gemwire.batch.eval import EvalOptions, run_eval
from gemwire.batch.sandbox import MEMORY
from gemwire.testing import ScriptedModel, load_scenario
from gemwire.testing.environment import live_processes

PROBE = Path(__file__).resolve().parents[1] / "kit" / "sandbox_probe_acp.py"
REPO = Path(__file__).resolve().parents[2]
METHOD_NOT_FOUND = "refused: -32601"


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def test_a_hostile_acp_agent_is_confined_and_its_attempts_graded(
    bubblewrap: None, listener: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "check.sh").write_text('test "$(cat answer)" = 42\n')
    task = Task(
        id="t",
        prompt="write 42 to answer",
        template=str(tmp_path / "repo"),
        verify=["sh", "check.sh"],
        verify_files=str(tmp_path / "hidden"),
        attempts=2,
    )
    out = tmp_path / "out"
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text('{"secret": "of the host home"}')
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    tag = uuid.uuid4().hex
    etc = Path("/etc") / f"gemwire-probe-{tag}"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMWIRE_AGENT_QWEN", shlex.join([sys.executable, str(PROBE)]))
    with ScriptedModel(load_scenario('{"turns": []}')) as model:
        reads = [
            tmp_path / "hidden" / "check.sh",
            out / "workspaces" / "t.qwen.1" / "answer",  # the second attempt reads the first's
            out / "results.jsonl",
            home / ".qwen" / "settings.json",
        ]
        env = {
            "GOOGLE_GEMINI_BASE_URL": model.url,
            "PROBE_READ": ":".join(map(str, reads)),
            "PROBE_LIST": f"{out / 'workspaces'}:{tmp_path / 'hidden'}",
            "PROBE_WRITE": f"{etc}:{tmp_path / 'outside.txt'}",
            "PROBE_SYMLINK_TO": str(REPO / "tests"),
            "PROBE_PLANT": "check.sh",
            "PROBE_VICTIM": str(victim),
            "PROBE_PORT": str(listener),
            "PROBE_MODEL_PORT": model.url.rsplit(":", 1)[1],
            "PROBE_TAG": tag,
            "PROBE_ALLOCATE": str(MEMORY + (1 << 30)),
        }
        batch = BatchOptions(concurrency=2, gemini=GeminiOptions(env=env))
        options = EvalOptions(agents=("qwen",), k=2, sandbox=True, batch=batch)

        async def go() -> None:
            async with run_eval([task], out, options) as running:
                async for _ in running:
                    pass

        try:
            anyio.run(go)
        finally:
            etc.unlink(missing_ok=True)
            (REPO / "tests" / tag).unlink(missing_ok=True)

    results = {r.task_id: r for r in read_results(out)}
    assert sorted(results) == ["t.qwen.1", "t.qwen.2"]
    for name, result in results.items():
        assert result.ok, result.error
        assert result.grade is not None
        assert (result.grade.status, result.grade.reward) == ("passed", 1.0), result.grade
        probes = json.loads((out / "workspaces" / name / "probes.json").read_text())
        assert_confined(probes, name=name, out=out, root=tmp_path, etc=etc, home=home)
        # gemwire does nothing on the host for it: no file written, no command run.
        assert probes["client_write"] == METHOD_NOT_FOUND
        assert probes["client_terminal"] == METHOD_NOT_FOUND
        # The task's preset (deny) still answers what it asks.
        assert probes["permission"] == {"outcome": {"outcome": "selected", "optionId": "reject"}}
        assert (out / "workspaces" / name / "check.sh").read_text().startswith("test ")
    assert not etc.exists()
    assert not (tmp_path / "outside.txt").exists()
    assert not (REPO / "tests" / tag).exists()
    assert victim.read_text() == "untouched"
    assert live_processes(f"PROBE_TAG={tag}", settle=5.0) == []
