"""The server under floods, as a process: a huge answer is one bounded envelope.

A stand-in ACP agent does what the prompt says: ``think N MB`` sends N thought chunks of
MB megabytes; ``say N MB`` answers N chunks of MB megabytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytestmark = pytest.mark.anyio

TOKEN = "memory-token-0123456789"

FLOODING_AGENT = r"""
import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n"); sys.stdout.flush()
def update(session, **fields):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": session, "update": fields}})
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": 1,
              "agentCapabilities": {}, "agentInfo": {"name": "scripted", "version": "1"}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "f-%d" % ident,
              "modes": {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Ask"}]}}})
    elif method == "session/prompt":
        session = message["params"]["sessionId"]
        what, count, megabytes = message["params"]["prompt"][0]["text"].split()
        text = "x" * (int(megabytes) << 20)
        for n in range(int(count)):
            kind = "agent_thought_chunk" if what == "think" else "agent_message_chunk"
            update(session, sessionUpdate=kind, content={"type": "text", "text": text})
        send({"jsonrpc": "2.0", "id": ident, "result": {"stopReason": "end_turn"}})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
"""


class Flooded:
    """``gemwire serve`` of the flooding agent, and a client of it."""

    def __init__(self, tmp_path: Path) -> None:
        agent = tmp_path / "flooding_agent.py"
        agent.write_text(FLOODING_AGENT)
        (tmp_path / "work").mkdir()
        self.cwd = str(tmp_path / "work")
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "gemwire", "serve", "--port", "0", "--root", self.cwd,
                "--state-dir", str(tmp_path / "state"),
                "--agent", f"flood={sys.executable} {agent}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "GEMWIRE_TOKEN": TOKEN},
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.base = line.split()[2].split("/?")[0]
        self.http = httpx.AsyncClient(
            base_url=self.base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120
        )

    async def session(self) -> str:
        response = await self.http.post("/v1/sessions", json={"agent": "flood", "cwd": self.cwd})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    async def turn(self, sid: str, prompt: str) -> None:
        """Prompt, and wait for the turn's end as a client that reads would."""
        async with self.http.stream("GET", f"/v1/sessions/{sid}/events?after=0") as events:
            await self.http.post(f"/v1/sessions/{sid}/prompt", json={"text": prompt})
            async for line in events.aiter_lines():
                if line.startswith("data: ") and '"type":"turn_completed"' in line[:80]:
                    return

    async def last_event(self, sid: str) -> dict[str, Any]:
        response = await self.http.get(
            f"/v1/sessions/{sid}/events?after=0", headers={"Accept": "application/json"}
        )
        last_seq = response.json()["last_seq"]
        response = await self.http.get(
            f"/v1/sessions/{sid}/events?after={last_seq - 2}",
            headers={"Accept": "application/json"},
        )
        return dict(response.json()["events"][0])

    async def close(self) -> None:
        await self.http.aclose()
        self.process.terminate()
        await anyio.to_thread.run_sync(self.process.communicate)


async def test_a_huge_answer_is_one_bounded_envelope(tmp_path: Path) -> None:
    server = Flooded(tmp_path)
    try:
        sid = await server.session()
        await server.turn(sid, "say 24 2")  # 48 MiB of answer
        completed = await server.last_event(sid)
    finally:
        await server.close()
    answer = completed["event"]["answer"]
    assert answer.startswith("x" * (1 << 20))
    assert answer[1 << 20 :] == (
        f"\n[gemwire: answer cut here, {(48 << 20) - (1 << 20)} more characters: the whole "
        "text is in this turn's message_delta events]"
    )
    assert len(json.dumps(completed)) < (1 << 20) + 1000
