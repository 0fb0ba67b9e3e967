from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from kit.processes import alive, in_group

from gemwire._transport import platform, process
from gemwire._transport.platform import OutputPipe
from gemwire._transport.platform._windows import StreamPipe
from gemwire._transport.process import Child
from gemwire.errors import AgentNotFound, InvalidOptions
from gemwire.runners.process import run_process

pytestmark = pytest.mark.anyio


async def test_stdin_is_delivered_and_both_pipes_captured() -> None:
    script = "import sys; d = sys.stdin.read(); print(d.upper()); print('warn', file=sys.stderr); sys.exit(3)"
    out = await run_process([sys.executable, "-c", script], input=b"hello")
    assert (out.returncode, out.stdout, out.stderr, out.timed_out) == (
        3,
        b"HELLO\n",
        b"warn\n",
        False,
    )


async def test_a_stderr_flood_does_not_block_the_child() -> None:
    script = "import sys; sys.stderr.write('x' * 20_000_000); print('done')"
    out = await run_process([sys.executable, "-c", script], timeout=60)
    assert out.stdout == b"done\n"
    assert len(out.stderr) == 20_000_000


async def test_timeout_stops_the_whole_group_including_grandchildren(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The parent ignores SIGTERM, like the gemini relauncher, and has a child of its own.
    monkeypatch.setattr(process, "TERMINATE_GRACE", 0.2)  # it is waited out: keep it short
    pids = tmp_path / "pids"
    script = (
        "import os, signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
        "p = subprocess.Popen(['sleep', '600']);"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{p.pid}}');"
        "print('started', flush=True); time.sleep(600)"
    )
    out = await run_process([sys.executable, "-c", script], timeout=2)
    assert out.timed_out
    assert out.returncode == -9  # SIGTERM was ignored, so the group got SIGKILL
    assert out.stdout == b"started\n"
    leader, _grandchild = map(int, pids.read_text().split())
    assert in_group(leader) == []


async def test_leftover_background_processes_are_killed_after_a_normal_exit() -> None:
    out = await run_process(["sh", "-c", "sleep 600 & echo $$"], timeout=30)
    assert out.returncode == 0
    assert in_group(int(out.stdout)) == []


async def test_cancelling_the_caller_stops_the_child(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    with anyio.move_on_after(1) as scope:
        await run_process(["sh", "-c", f"echo $$ > {pid}; sleep 600 & sleep 600"])
    assert scope.cancelled_caught
    assert in_group(int(pid.read_text())) == []


async def test_a_missing_executable_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound) as caught:
        await run_process([str(tmp_path / "no-such-gemini")])
    assert caught.value.executable == str(tmp_path / "no-such-gemini")
    assert "No such file or directory" in str(caught.value)


async def test_a_node_child_that_exits_right_after_a_big_write_loses_nothing() -> None:
    # Node queues what does not fit into the pipe and process.exit() drops the queue;
    # Gemini CLI lost its `result` line this way. Our pipes are large enough for this.
    script = "process.stdout.write('a'.repeat(600000) + '\\n'); process.stdout.write('end\\n'); process.exit(0)"
    out = await run_process(["node", "-e", script], timeout=60)
    assert out.returncode == 0
    assert out.stdout == b"a" * 600000 + b"\nend\n"


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


ESCAPES = {
    # Clears the tag, leaves the session and the group, ignores SIGHUP; its parent exits.
    "env -i setsid nohup": "env -i setsid nohup sh -c 'echo $$ > {pid}; exec sleep 600' "
    ">/dev/null 2>&1 &",
    # A double fork with an empty environment: the middle process exits at once.
    "double fork": "env -i sh -c \"sh -c 'echo \\$\\$ > {pid}; exec sleep 600' "
    '</dev/null >/dev/null 2>&1 &" &',
}


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper launcher is Linux-only")
@pytest.mark.parametrize("command", ESCAPES.values(), ids=list(ESCAPES))
async def test_a_detached_command_with_a_cleared_environment_does_not_escape(
    tmp_path: Path, command: str
) -> None:
    pid_file = tmp_path / "pid"
    script = command.format(pid=pid_file) + f"\nwhile [ ! -s {pid_file} ]; do sleep 0.05; done"
    out = await run_process(["sh", "-c", script], timeout=30)
    pid = int(pid_file.read_text())
    try:
        assert (out.returncode, out.timed_out) == (0, False)
        assert not alive(pid)
    finally:
        _kill(pid)


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper launcher is Linux-only")
async def test_a_detached_command_does_not_escape_a_stop(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = ESCAPES["env -i setsid nohup"].format(pid=pid_file) + "\nsleep 600"
    with anyio.move_on_after(30):
        async with await Child.spawn(["sh", "-c", script]) as child:
            while not pid_file.exists() or not pid_file.read_text():  # noqa: ASYNC110
                await anyio.sleep(0.05)
            pid = int(pid_file.read_text())
            await child.stop()
    try:
        assert child.returncode == -signal.SIGTERM
        assert not alive(pid)
    finally:
        _kill(pid)


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper launcher is Linux-only")
def test_the_tree_is_stopped_when_the_host_process_is_killed(tmp_path: Path) -> None:
    # A host that dies without cleaning up (SIGKILL): the launcher notices and stops it all.
    pid_file = tmp_path / "pid"
    script = ESCAPES["env -i setsid nohup"].format(pid=pid_file) + "\nsleep 600"
    host = (
        "import anyio, sys; from gemwire._transport.process import Child\n"
        "async def main():\n"
        f"    child = await Child.spawn(['sh', '-c', {script!r}])\n"
        "    print(child.pid, flush=True); await anyio.sleep(600)\n"
        "anyio.run(main)\n"
    )
    with subprocess.Popen([sys.executable, "-c", host], stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        launcher = int(process.stdout.readline())
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        process.kill()
    try:
        assert not alive(pid, settle=10)
        assert not alive(launcher, settle=10)
    finally:
        _kill(pid)


async def test_a_missing_working_folder_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptions) as caught:
        await run_process(["sh", "-c", "true"], cwd=tmp_path / "nope")
    assert str(caught.value) == f"cannot run sh in {tmp_path / 'nope'}: the folder does not exist"


async def test_a_program_without_execute_permission_is_named_as_such(tmp_path: Path) -> None:
    program = tmp_path / "gemini"
    program.write_text("#!/bin/sh\n")
    with pytest.raises(AgentNotFound) as caught:
        await run_process([str(program)])
    assert str(caught.value) == f"cannot run {program}: Permission denied"


async def test_a_file_as_working_folder_is_named_as_such(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.touch()
    with pytest.raises(InvalidOptions) as caught:
        await run_process(["sh", "-c", "true"], cwd=file)
    assert str(caught.value) == f"cannot run sh in {file}: it is not a folder"


def _open_fds() -> set[str]:
    # macOS has no /proc: its /dev/fd lists the process's own descriptors.
    return {
        fd.name for fd in Path("/proc/self/fd" if sys.platform == "linux" else "/dev/fd").iterdir()
    }


@pytest.mark.parametrize(
    "output_pipe",
    [platform.output_pipe, lambda capacity: StreamPipe()],
    ids=["native", "windows"],
)
async def test_closing_a_child_whose_output_waits_unread_closes_every_pipe(
    output_pipe: Callable[[int], OutputPipe], anyio_backend: str
) -> None:
    """Windows' pipes are the process's own, and they do not close with it. asyncio reads
    them ahead, up to 128 KiB: 160 KiB left unread stops it reading before the end of file
    that would close the pipe by itself. trio reads only when asked (160 KiB would block
    the child), and closes nothing by itself either."""
    size = 160 * 1024 if anyio_backend == "asyncio" else 1
    script = (
        f"import sys, time; sys.stdout.write('x' * {size}); sys.stdout.flush()\n"
        "sys.stderr.write('written'); sys.stderr.flush(); time.sleep(60)"
    )
    before = _open_fds()
    child = await Child.spawn([sys.executable, "-c", script], output_pipe=output_pipe)
    said = b""
    while said != b"written":
        said += await child.read("stderr")
    await child.aclose()
    assert (child.returncode, _open_fds()) == (-signal.SIGTERM, before)
