"""Run a program to completion and keep what it wrote: the one-shot form of a run.

    output = await run_process(["node", "--version"], timeout=10)
    output.returncode, output.stdout

For callers above the runners (``gemwire doctor``'s checks, the fixture recorder) that
need a program's whole output, with the same process-group care as a run (`Child`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import msgspec

from gemwire._transport.process import Child

__all__ = ("ProcessOutput", "run_process")


class ProcessOutput(msgspec.Struct, frozen=True, kw_only=True):
    """What a finished child left: its exit status and everything it wrote."""

    returncode: int
    """Exit status; negative for death by signal (``-9`` for SIGKILL), as subprocess does."""
    stdout: bytes
    stderr: bytes
    timed_out: bool


async def run_process(
    argv: Sequence[str],
    *,
    input: bytes = b"",
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - timing out is an outcome (timed_out)
    keep: int | None = None,
) -> ProcessOutput:
    """Run ``argv`` to completion with ``input`` on stdin (written at once, then closed).

    stdout and stderr are drained concurrently, so a chatty stderr cannot block the
    child. On timeout or cancellation the whole process group is stopped. After the child
    exits, anything it left running in its group (background shell commands) is killed.

    With ``keep``, only the last ``keep`` bytes of each stream are kept (a verifier that
    writes gigabytes costs no memory).

    Raises `AgentNotFound` when ``argv[0]`` cannot be executed.
    """
    captured = {"stdout": bytearray(), "stderr": bytearray()}

    async def drain(child: Child, stream: str) -> None:
        while data := await child.read(stream):
            captured[stream] += data
            if keep is not None and len(captured[stream]) > 2 * keep:
                del captured[stream][:-keep]

    async with await Child.spawn(argv, cwd=cwd, env=env) as child, anyio.create_task_group() as tg:
        tg.start_soon(drain, child, "stdout")
        tg.start_soon(drain, child, "stderr")
        await child.send_input(input)
        with anyio.move_on_after(timeout) as scope:
            await child.wait()
        await child.stop()
        # Leftover grandchildren would keep the pipes open and the drains waiting.
        child.kill_leftovers()
    assert child.returncode is not None
    return ProcessOutput(
        returncode=child.returncode,
        stdout=bytes(captured["stdout"][-keep:] if keep else captured["stdout"]),
        stderr=bytes(captured["stderr"][-keep:] if keep else captured["stderr"]),
        timed_out=scope.cancelled_caught,
    )
