"""`ProcessChannel` given to `AcpClient` explicitly: the same client, the same process."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from gemwire.events import TurnError
from gemwire.runners.acp import AcpClient, AcpOptions, AgentLaunch, ProcessChannel

pytestmark = pytest.mark.anyio

FAKE = Path(__file__).with_name("fake_agent.py")


def launch(mode: str, tmp_path: Path) -> AgentLaunch:
    return AgentLaunch(
        command=(sys.executable, str(FAKE)), cwd=str(tmp_path), env={"FAKE_ACP_MODE": mode}
    )


async def test_the_options_launch_is_what_the_default_channel_runs(tmp_path: Path) -> None:
    options = AcpOptions(
        command=("agent", "--acp"), cwd=str(tmp_path), env={"A": "1"}, inherit_env=False
    )
    assert options.launch == AgentLaunch(
        command=("agent", "--acp"), cwd=str(tmp_path), env={"A": "1"}, inherit_env=False
    )
    assert options.environment() == {"A": "1"}
    with pytest.raises(ValueError, match="the launch command is empty"):
        ProcessChannel(AgentLaunch(command=()))


async def test_a_given_process_channel_runs_the_agent_and_reports_its_end(
    tmp_path: Path,
) -> None:
    channel = ProcessChannel(launch("crash_mid_request", tmp_path))
    with anyio.fail_after(60):
        async with AcpClient(AcpOptions(cwd=str(tmp_path)), channel=channel) as client:
            session = await client.new_session()
            async with session.prompt("hi") as turn:
                result = await turn.wait()
            assert await client.wait_exited() == -9
    assert result.answer == "partial"
    assert result.error == TurnError(
        kind="crashed",
        message="the agent exited with code -9 before answering session/prompt",
        exit_code=-9,
    )
    assert (channel.exit_code, channel.close_reason, client.exit_code) == (-9, None, -9)
    assert client.stderr_tail == channel.stderr_tail
    assert channel.stderr_tail.startswith("initialize ")  # the fake agent logs what it got
