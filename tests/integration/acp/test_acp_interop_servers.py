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

import pytest
from kit.acp_interop import FIRST_FIVE, HELLO, seven_steps

SDK = Path(__file__).parents[3] / "clis" / "acp-sdk-ts-2.4.0"
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.anyio_backends("asyncio"),
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
