"""``gemwire serve`` as a process for the e2e tests: `Server` (its URL read from the line it
prints, an HTTP client with the token) and `sse` (a session's envelopes as they come)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import anyio
import httpx


class Environment(Protocol):
    """An isolated home the server runs in (`IsolatedGemini`, an `IsolatedAgent`)."""

    workspace: Path

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]: ...


TOKEN = "e2e-token-0123456789"
URL = re.compile(r"^gemwire serve: (http://127\.0\.0\.1:\d+)/\?token=(\S+)\n$")


class Server:
    """A ``gemwire serve --port 0`` process (with ``args`` besides) and a client for it."""

    def __init__(self, env: Environment, state: Path, args: Sequence[str] = ()) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "gemwire", "serve", "--port", "0",
                "--root", str(env.workspace), "--state-dir", str(state), *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env.environ({"GEMWIRE_TOKEN": TOKEN}),
            cwd=env.workspace,
        )  # fmt: skip
        assert self.process.stdout is not None
        match = URL.match(self.process.stdout.readline())
        assert match is not None
        self.base = match.group(1)
        self.host = self.base.removeprefix("http://")
        """``127.0.0.1:PORT``, for the other schemes (``ws://``)."""
        self.http = httpx.AsyncClient(
            base_url=self.base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
        )

    async def post(self, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        return await self.http.post(path, json=body or {})

    async def stop(self) -> tuple[int, str]:
        """SIGTERM; the exit status and what it logged."""
        self.process.send_signal(signal.SIGTERM)
        _, stderr = await anyio.to_thread.run_sync(lambda: self.process.communicate(timeout=90))
        return self.process.returncode, stderr

    async def close(self) -> None:
        """Killed if still running; its pipes and the client closed (a pipe left to the
        garbage collector is an unraisable ResourceWarning in whichever test runs then)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            assert pipe is not None
            pipe.close()
        await self.http.aclose()


class Sse:
    """Envelopes read from an SSE stream as they come."""

    def __init__(self) -> None:
        self.envelopes: list[dict[str, Any]] = []
        self.ids: list[int] = []
        self.ended = anyio.Event()
        self._changed = anyio.Event()

    async def until(self, test: Any) -> dict[str, Any]:
        """The first envelope ``test`` accepts (waiting for it)."""
        while True:
            found = next((e for e in self.envelopes if test(e)), None)
            if found is not None:
                return found
            assert not self.ended.is_set(), "the stream ended"
            changed = self._changed
            await changed.wait()

    def add(self, envelope: dict[str, Any], seq: int) -> None:
        self.envelopes.append(envelope)
        self.ids.append(seq)
        self._changed.set()
        self._changed = anyio.Event()


@asynccontextmanager
async def sse(server: Server, path: str) -> AsyncIterator[Sse]:
    stream = Sse()

    async def read() -> None:
        async with server.http.stream("GET", path) as response:
            assert response.status_code == 200
            fields: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line:
                    name, _, value = line.partition(": ")
                    fields[name] = value
                elif fields.get("event") == "gemwire":
                    stream.add(json.loads(fields["data"]), int(fields["id"]))
                    fields = {}
                else:
                    fields = {}
        stream.ended.set()
        stream._changed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        yield stream
        tg.cancel_scope.cancel()  # the connection drops


def event(kind: str, **fields: Any) -> Any:
    def test(envelope: dict[str, Any]) -> bool:
        found = envelope.get("event") or {}
        return found.get("type") == kind and all(found.get(k) == v for k, v in fields.items())

    return test


def completed_turns(envelopes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["event"] for e in envelopes if event("turn_completed")(e)]
