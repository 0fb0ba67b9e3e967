"""The whole server as ``gemwire serve`` runs it (`gemwire.server.run`: hypercorn)
on 127.0.0.1, in a thread of its own, its agents `ScriptedAgent`s (`kit.wire.ThreadLauncher`);
and `self_signed`, a certificate for 127.0.0.1 made by the ``openssl`` CLI.

The socket listens before the thread starts, so a client may connect at once: the
connection waits in the backlog until hypercorn's lifespan has started.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gemwire.server import create_app
from gemwire.server.run import bind, serve_until
from kit.server import FakeStreamLauncher, make_config
from kit.wire import ThreadLauncher

__all__ = ("h2_server", "self_signed")


def self_signed(folder: Path) -> tuple[str, str]:
    """A certificate and its key for 127.0.0.1 in ``folder`` (skips without ``openssl``)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl CLI to make a certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
         "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


@contextmanager
def h2_server(
    root: str, state_dir: str, launcher: ThreadLauncher | None = None, **changes: Any
) -> Iterator[str]:
    """The server's base URL (``http://`` or, given ``ssl_certfile``, ``https://``), served
    until the ``with`` ends; then it shuts down as on SIGTERM."""
    sock = bind("127.0.0.1", 0)
    config = make_config(root, state_dir, port=sock.getsockname()[1], **changes)
    app = create_app(
        config, launcher=launcher or ThreadLauncher(), stream_launcher=FakeStreamLauncher()
    )
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            loop.run_until_complete(serve_until(app, config, sock, stop.wait))
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
            failure.append(exc)
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="test-h2-server", daemon=True)
    thread.start()
    try:
        yield config.url
    finally:
        with contextlib.suppress(RuntimeError):  # the loop closed: the server failed
            loop.call_soon_threadsafe(stop.set)
        thread.join(60)
        sock.close()
    assert not thread.is_alive(), "the server did not stop"
    if failure:
        raise failure[0]
