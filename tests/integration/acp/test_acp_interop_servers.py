"""gemwire's own client (`AcpClient` over `remote_channel`) through the seven steps against
ACP servers we did not write, over WebSocket and Streamable HTTP: the ACP TypeScript SDK
2.4.0's `AcpServer` (clis/acp-sdk-ts-2.4.0/server.mjs, a trivial agent built with the SDK).
The steps: initialize, session/new, a streamed prompt, a permission round trip, cancel,
session/load on a new connection (its replay) and a prompt on the loaded session. One
server process serves both transports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gemwire.events import Event
from gemwire.runners.acp import AcpClient, AcpOptions
from gemwire.runners.acp.remote import remote_channel

SDK = Path(__file__).parents[3] / "clis" / "acp-sdk-ts-2.4.0"
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        shutil.which("node") is None or not (SDK / "node_modules").is_dir(),
        reason="the ACP TypeScript SDK is installed by `make agents` (clis/acp-sdk-ts-2.4.0)",
    ),
]


@pytest.fixture(scope="module")
def ts_server() -> Iterator[str]:
    """The SDK's AcpServer on 127.0.0.1: its ``host:port``."""
    process = subprocess.Popen(
        ["node", "server.mjs"],
        cwd=SDK,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
    )
    assert process.stdout is not None
    assert process.stdin is not None
    try:
        port = json.loads(process.stdout.readline())["port"]
        yield f"127.0.0.1:{port}"
    finally:
        process.stdin.close()  # it exits when its stdin ends
        process.wait(10)
        process.stdout.close()


def _seen(events: list[Event]) -> list[tuple[str, Any]]:
    return [(e.type, getattr(e, "text", None)) for e in events if e.type != "usage"]


async def seven_steps(url: str, cwd: str) -> list[tuple[str, Any]]:
    """The seven steps through gemwire's client: what each showed."""
    steps: list[tuple[str, Any]] = []
    options = AcpOptions(permissions="all")
    async with AcpClient(options, channel=remote_channel(url)) as client:
        steps.append(("initialize", client.agent_capabilities.load_session))
        session = await client.new_session(cwd=cwd)
        steps.append(("session/new", bool(session.session_id)))
        for text in ("hello", "permission"):
            async with session.prompt(text) as turn:
                events = [e async for e in turn]
            steps.append((text, (turn.result.stop_reason, turn.result.answer, _seen(events))))
        async with session.prompt("hang") as turn:
            async for event in turn:
                if event.type == "message_delta":
                    await turn.cancel()
            steps.append(("cancel", turn.result.stop_reason))
    async with AcpClient(options, channel=remote_channel(url)) as client:
        loaded = await client.load_session(session.session_id, cwd=cwd)
        steps.append(("session/load", _seen(loaded.take_events())))
        async with loaded.prompt("hello") as turn:
            await turn.wait()
        steps.append(("prompt after load", (turn.result.stop_reason, turn.result.answer)))
    return steps


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the steps are the server's; the client's backends are tested elsewhere


HELLO = [("session_started", None), ("user_message", "hello"), ("message_delta", "Hello there.")]
FIRST_FIVE = [
    ("initialize", True),
    ("session/new", True),
    ("hello", ("end_turn", "Hello there.", [*HELLO, ("turn_completed", None)])),
    (
        "permission",
        (
            "end_turn",
            "yes",
            [
                ("user_message", "permission"),
                ("tool_call_started", None),
                ("permission_requested", None),
                ("permission_resolved", None),
                ("message_delta", "yes"),
                ("notice", None),  # the tool call never ended: the turn closes it
                ("tool_call_finished", None),
                ("turn_completed", None),
            ],
        ),
    ),
    ("cancel", "cancelled"),
]


async def test_gemwire_runs_the_seven_steps_against_the_typescript_sdk_server_over_websocket(
    ts_server: str, tmp_path: Path
) -> None:
    steps = await seven_steps(f"ws://{ts_server}/acp", str(tmp_path))
    assert steps == [
        *FIRST_FIVE,
        ("session/load", HELLO),
        ("prompt after load", ("end_turn", "Hello there.")),
    ]


async def test_gemwire_runs_the_seven_steps_against_the_typescript_sdk_server_over_http(
    ts_server: str, tmp_path: Path
) -> None:
    steps = await seven_steps(f"http://{ts_server}/acp", str(tmp_path))
    assert steps[:5] == FIRST_FIVE
    # The SDK's server answers session/load on the connection's stream and replays on the
    # session's (as the RFD's flow draws it): two streams, no order between them, so the
    # replay's tail may come after the answer (docs/server.md). The load itself holds.
    (load, replay), (after, (stop, answer)) = steps[5:]
    assert (load, after, stop) == ("session/load", "prompt after load", "end_turn")
    assert replay == HELLO[: len(replay)]
    assert answer.endswith("Hello there.")
