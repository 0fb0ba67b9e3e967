"""``gemwire eval --sandbox``: a hostile agent is stopped at every door, and still graded.

The agent is tests/kit/sandbox_probe.py run as the Gemini CLI: it tries to read the hidden
tests, another attempt's workspace, the output folder and the home; to write outside its
workspace, directly and through a symlink; to plant a symlink where a hidden test is copied;
to connect to a local port other than the model's, to resolve a name, and to leave a daemon
running, and to allocate more memory than a sandbox allows. It notes what each try got, then
solves the task. Each attempt runs in bubblewrap
(``make test`` installs it: `make sandbox`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from kit.sandbox_confined import assert_confined

from gemwire import BatchOutputError, GeminiOptions, InvalidOptions, SandboxUnavailable
from gemwire.batch import BatchOptions, Task, read_results
from gemwire.batch._sandboxed import Sandboxing
from gemwire.batch.eval import EvalOptions, run_eval
from gemwire.batch.sandbox import MEMORY, PROCESSES, Bubblewrap, Confinement
from gemwire.batch.verify import verify
from gemwire.cli import main
from gemwire.testing import ScriptedModel, load_scenario
from gemwire.testing.environment import live_processes

PROBE = Path(__file__).resolve().parents[1] / "kit" / "sandbox_probe.py"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(load_scenario('{"turns": []}')) as served:
        yield served


@pytest.fixture
def listener() -> Iterator[int]:
    """A port open on the host's loopback that no attempt may reach."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


def _hidden_task(tmp_path: Path) -> Task:
    (tmp_path / "repo").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "check.sh").write_text('test "$(cat answer)" = 42\n')
    return Task(
        id="t",
        prompt="write 42 to answer",
        template=str(tmp_path / "repo"),
        verify=["sh", "check.sh"],
        verify_files=str(tmp_path / "hidden"),
        attempts=2,
    )


def test_a_hostile_agent_is_confined_and_its_attempts_graded(
    bubblewrap: None, model: ScriptedModel, listener: int, tmp_path: Path
) -> None:
    task = _hidden_task(tmp_path)
    out = tmp_path / "out"
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text('{"secret": "of the host home"}')
    (home / ".gemini" / "history").mkdir()  # sessions are not copied, only the top files
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    tag = uuid.uuid4().hex
    etc = Path("/etc") / f"gemwire-probe-{tag}"
    port = model.url.rsplit(":", 1)[1]
    reads = [
        tmp_path / "hidden" / "check.sh",
        out / "workspaces" / "t.gemini.1" / "answer",  # the second attempt reads the first's
        out / "results.jsonl",
        home / ".gemini" / "settings.json",
    ]
    env = {
        "GOOGLE_GEMINI_BASE_URL": model.url,
        "GEMINI_API_KEY": "k",
        "PROBE_READ": ":".join(map(str, reads)),
        "PROBE_LIST": f"{out / 'workspaces'}:{tmp_path / 'hidden'}",
        "PROBE_WRITE": f"{etc}:{tmp_path / 'outside.txt'}",
        "PROBE_SYMLINK_TO": str(REPO / "tests"),
        "PROBE_PLANT": "check.sh",
        "PROBE_VICTIM": str(victim),
        "PROBE_PORT": str(listener),
        "PROBE_MODEL_PORT": port,
        "PROBE_TAG": tag,
        "PROBE_ALLOCATE": str(MEMORY + (1 << 30)),
    }
    gemini = GeminiOptions(executable=str(PROBE), gemini_home=str(home), env=env)
    options = EvalOptions(
        agents=("gemini",), k=2, sandbox=True, batch=BatchOptions(concurrency=1, gemini=gemini)
    )

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
    assert sorted(results) == ["t.gemini.1", "t.gemini.2"]
    for name, result in results.items():
        assert result.ok, result.error
        assert result.grade is not None
        # The hidden check replaced the agent's symlink and graded the agent's answer.
        assert (result.grade.status, result.grade.reward) == ("passed", 1.0), result.grade
        probes = json.loads((out / "workspaces" / name / "probes.json").read_text())
        assert_confined(probes, name=name, out=out, root=tmp_path, etc=etc, home=home)
        assert (out / "workspaces" / name / "check.sh").read_text().startswith("test ")
    assert not etc.exists()
    assert not (tmp_path / "outside.txt").exists()
    assert not (REPO / "tests" / tag).exists()
    assert victim.read_text() == "untouched"
    assert live_processes(f"PROBE_TAG={tag}", settle=5.0) == []


def test_the_verifier_is_confined_and_writes_its_reward(
    bubblewrap: None, model: ScriptedModel, listener: int, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    etc = Path("/etc") / f"gemwire-verifier-{uuid.uuid4().hex}"
    script = (
        "import os, socket, pathlib\n"
        "blocked = 0\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {listener}), timeout=5)\n"
        "except OSError:\n"
        "    blocked += 1\n"
        "try:\n"
        f"    pathlib.Path({str(etc)!r}).write_text('x')\n"
        "except OSError:\n"
        "    blocked += 1\n"
        "pathlib.Path(os.environ['GEMWIRE_REWARD_FILE']).write_text(str(blocked / 4))\n"
    )
    task = Task(id="v", prompt="p", verify=[sys.executable, "-c", script])
    gemini = GeminiOptions(env={"GOOGLE_GEMINI_BASE_URL": model.url})

    async def go() -> object:
        sandbox = await Bubblewrap.found()
        async with Sandboxing(sandbox, gemini, hidden=()) as sandboxing:
            return await verify(task, str(workspace), confine=sandboxing.verifier(str(workspace)))

    try:
        grade = anyio.run(go)
    finally:
        etc.unlink(missing_ok=True)
    # Both tries blocked (0.25 each), and the reward it wrote from inside counts.
    assert (grade.status, grade.reward) == ("failed", 0.5), grade  # type: ignore[attr-defined]


def test_a_verifier_the_sandbox_cannot_run_is_an_error_not_a_0(
    bubblewrap: None, model: ScriptedModel, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "check").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "check").chmod(0o755)
    task = Task(id="v", prompt="p", verify=[str(tmp_path / "check")])  # under the hidden /tmp
    gemini = GeminiOptions(env={"GOOGLE_GEMINI_BASE_URL": model.url})

    async def go() -> object:
        sandbox = await Bubblewrap.found()
        async with Sandboxing(sandbox, gemini, hidden=()) as sandboxing:
            return await verify(task, str(workspace), confine=sandboxing.verifier(str(workspace)))

    grade = anyio.run(go)
    assert (grade.status, grade.reward, grade.exit_code) == ("crashed", None, 127), grade  # type: ignore[attr-defined]


def test_no_bwrap_is_a_typed_error_and_the_command_line_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        anyio.run(Bubblewrap.found)
    (tmp_path / "repo").mkdir()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "t", "prompt": "p", "template": "repo", "verify": "true"}\n')
    ran = CliRunner().invoke(main, ["eval", str(tasks), "-o", str(tmp_path / "out"), "--sandbox"])
    assert ran.exit_code == 4
    assert ran.stderr == (
        "gemwire: --sandbox needs bubblewrap: apt-get install bubblewrap (dnf install bubblewrap)\n"
    )
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_bwrap_without_user_namespaces_is_refused_saying_how_to_allow_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(SandboxUnavailable, match="unprivileged_userns_clone=1") as raised:
        anyio.run(Bubblewrap.found)
    assert str(raised.value).endswith("(bwrap: No permissions to create new namespace)")


def test_a_model_on_a_privileged_port_is_refused() -> None:
    env = {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:80"}
    with pytest.raises(InvalidOptions, match="needs the model on a port from 1024 up"):
        Sandboxing(Bubblewrap("bwrap"), GeminiOptions(env=env, inherit_env=False), hidden=())


@pytest.mark.parametrize(
    "url", [None, "https://generativelanguage.googleapis.com", "http://10.0.0.1:80"]
)
def test_a_model_off_the_loopback_is_refused(url: str | None) -> None:
    env = {"GOOGLE_GEMINI_BASE_URL": url} if url else {}
    with pytest.raises(InvalidOptions, match="only a model served on this machine's loopback"):
        Sandboxing(Bubblewrap("bwrap"), GeminiOptions(env=env, inherit_env=False), hidden=())


def test_the_command_hides_folders_and_binds_the_workspace_after_them() -> None:
    confinement = Confinement(
        workspace="/o/workspaces/a", home="/p/1/home", hidden=("/",), model_port=9
    )
    command = Bubblewrap("/usr/bin/bwrap").command(["agent", "-p"], confinement)
    # No socket given: no relay, only the limits.
    limits = [f"--data={MEMORY}", f"--nproc={PROCESSES}"]
    assert command[-7:] == ["--", "prlimit", *limits, "--", "agent", "-p"]
    assert command.index("--tmpfs") < command.index("/o/workspaces/a")
    assert {"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session"} <= set(command)


def test_a_fork_bomb_stops_at_the_process_limit(bubblewrap: None) -> None:
    # As nobody (root's processes are never limited), with a limit of 32; its sleeps end
    # with the sandbox. A folder nobody can reach (pytest's tmp_path is root's alone).
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o777)
        confinement = Confinement(workspace=folder, home=folder, processes=32)
        bomb = "for i in $(seq 100); do sleep 30 & done; echo unreachable"
        command = Bubblewrap("bwrap").command(["sh", "-c", bomb], confinement)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        ran = subprocess.run(
            [*nobody, *command], check=False, capture_output=True, text=True, timeout=60
        )
    assert (ran.returncode, ran.stdout) == (2, ""), ran.stderr
    assert ran.stderr.endswith("Cannot fork\n")


@pytest.mark.parametrize(
    ("recorded", "flags", "said"),
    [
        (b'{"sandbox": true}', [], "was started with --sandbox: resume it so"),
        (b'{"sandbox": false}', ["--sandbox"], "was started without --sandbox: resume it so"),
    ],
)
def test_an_eval_resumes_only_as_sandboxed_as_it_started(
    recorded: bytes, flags: list[str], said: str, tmp_path: Path
) -> None:
    (tmp_path / "repo").mkdir()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "t", "prompt": "p", "template": "repo", "verify": "true"}\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "eval.json").write_bytes(recorded)
    ran = CliRunner().invoke(main, ["eval", str(tasks), "-o", str(tmp_path / "out"), *flags])
    assert ran.exit_code == 2
    assert said in ran.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_a_damaged_eval_json_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "eval.json").write_bytes(b'{"sandbox": "yes"}')
    options = EvalOptions(agents=("gemini",))

    async def go() -> None:
        async with run_eval([Task(id="t", prompt="p")], tmp_path / "out", options):
            pass

    with pytest.raises(BatchOutputError, match=r"eval\.json: Expected `bool`"):
        anyio.run(go)
