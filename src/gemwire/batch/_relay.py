"""The first process inside a sandbox: the model's port on the sandbox's own loopback.

    python -I -S -c "$(cat _relay.py)" PORT SOCKET PROGRAM [ARG ...]

A sandbox has a network namespace of its own: its loopback is not the host's, so the model
served on the host's ``127.0.0.1:PORT`` is out of reach, as is everything else. This listens
on ``127.0.0.1:PORT`` inside, carries every connection to the Unix socket ``SOCKET`` (bound in
from the host, where gemwire carries it on to the model), then runs the program and exits as
it does. It is run as source by the interpreter's own path, standard library only: the
sandbox may hide the folder gemwire is installed in.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

assert sys.platform == "linux"  # bubblewrap's: the sandbox is Linux's (mypy checks it so)
_CHUNK = 65536


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # either side went away: the other is closed below
    finally:
        source.close()


def _carry(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
    _pump(client, upstream)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_carry, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    port, path, program = int(argv[0]), argv[1], argv[2:]
    listener = socket.create_server(("127.0.0.1", port))  # before the program: never refused
    child = os.fork()
    if child == 0:
        listener.close()
        try:
            os.execvp(program[0], program)
        except OSError as exc:
            sys.stderr.write(f"cannot run {program[0]}: {exc.strerror}\n")
        os._exit(127)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda number, _: os.kill(child, number))
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    if status < 0:  # killed by a signal: end the same way, so the caller sees which
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
