"""Runs an ACP agent and copies every frame both ways into a file, for the recorded frames
in tests/fixtures/acp (``make record-agents``).

    python frame_tap.py FRAMES AGENT_ARGV...

Each line of FRAMES is one frame as it went over the pipe: ``> `` and what the client sent,
or ``< `` and what the agent sent.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from typing import IO


def main() -> None:
    frames_path, *argv = sys.argv[1:]
    agent = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None
    assert agent.stdout is not None
    lock = threading.Lock()
    with open(frames_path, "wb") as frames:

        def copy(source: IO[bytes], target: IO[bytes], prefix: bytes) -> None:
            with contextlib.suppress(OSError, ValueError):  # the other side went away
                for line in source:
                    with lock:
                        frames.write(prefix + line.rstrip(b"\n") + b"\n")
                        frames.flush()
                    target.write(line)
                    target.flush()
                target.close()

        to_agent = threading.Thread(
            target=copy, args=(sys.stdin.buffer, agent.stdin, b"> "), daemon=True
        )
        to_agent.start()
        copy(agent.stdout, sys.stdout.buffer, b"< ")
    sys.exit(agent.wait())


if __name__ == "__main__":
    main()
