"""A permission the server denies on its own (no client answered) is its own outcome:
``permission_resolved`` has ``outcome: "denied_no_client"``, and every reader of the events
(the live view, the transcript) says so rather than show it as the user's "Reject"."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from kit.server import scripted_server
from rich.console import Console

from gemwire.cli import render
from gemwire.cli.transcript import Transcript
from gemwire.events import PermissionOption, PermissionRequested, PermissionResolved
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

PERMISSION = {
    "toolCall": {"toolCallId": "t1", "title": "Write a.txt", "kind": "edit"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}


async def ask_permission(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.request("session/request_permission", {"sessionId": sid, **PERMISSION})
    return "end_turn"


async def _resolved(tmp_path: Path, answer: str | None, **config: Any) -> dict[str, Any]:
    """The ``permission_resolved`` event of one turn that a client follows, answered by that
    client with ``answer`` (``None``: it never answers)."""
    (tmp_path / "root").mkdir(parents=True)
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(*dirs, on_prompt=ask_permission, **config) as (server, _):
        response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        sid = response.json()["id"]
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            while '"permission_requested"' not in stream.raw.decode():
                await stream.wait_for(len(stream.envelopes()) + 1)
            if answer is not None:
                path = f"/v1/sessions/{sid}/permissions/0"
                answered = await server.request("POST", path, json={"option_id": answer})
                assert answered.status_code == 200, answered.text
            while '"turn_completed"' not in stream.raw.decode():
                await stream.wait_for(len(stream.envelopes()) + 1)
            events = [e["event"] for e in stream.envelopes() if "event" in e]
    [resolved] = [e for e in events if e["type"] == "permission_resolved"]
    return dict(resolved)


async def test_the_servers_own_denial_is_its_own_outcome(tmp_path: Path) -> None:
    alone = await _resolved(tmp_path / "alone", None, permission_timeout=0.01)
    chosen = await _resolved(tmp_path / "chosen", "no")
    assert {k: alone[k] for k in ("request_id", "option_id", "outcome")} == {
        "request_id": "0",
        "option_id": "no",
        "outcome": "denied_no_client",
    }
    assert chosen["option_id"] == "no"
    assert "outcome" not in chosen  # the user's own Reject: as before


ASKED = PermissionRequested(
    agent="a",
    request_id="0",
    call_id="t1",
    options=[PermissionOption(option_id="no", name="Reject", kind="reject_once")],
)
ALONE = PermissionResolved(agent="a", request_id="0", call_id="t1", option_id="no")


def test_the_live_view_and_the_transcript_say_no_client_chose() -> None:
    denied = PermissionResolved(
        agent="a", request_id="0", call_id="t1", option_id="no", outcome="denied_no_client"
    )
    console = Console(file=io.StringIO(), width=100)
    console.print(render.permission_resolved(denied, "Reject"))
    console.print(render.permission_resolved(ALONE, "Reject"))
    assert console.file.getvalue().splitlines() == [  # type: ignore[attr-defined]
        "    → Reject (denied: no client)",
        "    → Reject",
    ]
    out = io.StringIO()
    transcript = Transcript(out)
    for event in (ASKED, denied, ALONE):
        transcript.write(event)
    assert out.getvalue().splitlines()[1:] == [
        "  ? permission: Reject (denied: no client)",
        "  ? permission: Reject",
    ]
