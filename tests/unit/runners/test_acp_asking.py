"""A permission preset holds whatever the agent's default mode (`gemwire.runners.acp.asking`),
against scripted agents named as the real ones: which request the client sends, what it
refuses, and how the agents without an asking mode are started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gemwire.errors import PermissionsUnenforceable
from gemwire.runners.acp import AcpOptions
from gemwire.runners.acp.asking import asking_launch
from gemwire.runners.acp.process_channel import AgentLaunch
from gemwire.testing import AgentScenario, ScriptedAgent, scripted_client
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

CLAUDE = "@agentclientprotocol/claude-agent-acp"
RESUMABLE = acp.AgentCapabilities(session_capabilities=acp.SessionCapabilities(resume={}))
MODES = ["default", "acceptEdits", "plan", "auto", "bypassPermissions"]


def saying(name: str, capabilities: acp.AgentCapabilities | None = RESUMABLE) -> AgentScenario:
    """A scripted agent that says it is ``name``."""
    info = acp.Implementation(name=name, version="1.0")
    if capabilities is None:
        return AgentScenario(agent_info=info)
    return AgentScenario(agent_info=info, agent_capabilities=capabilities)


def opened(current: str, modes: list[str] = MODES) -> dict[str, Any]:
    """A session answer with claude-agent-acp's shape: ``modes`` and a ``mode`` option."""
    option = {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": [{"value": m, "name": m} for m in modes],
    }
    return {
        "modes": {
            "currentModeId": current,
            "availableModes": [{"id": m, "name": m} for m in modes],
        },
        "configOptions": [option],
    }


def agent_methods(answer_mode: str | None = None) -> dict[str, Any]:
    """``session/resume`` opens in ``auto``; ``set_config_option`` answers the mode set
    (or ``answer_mode``: an agent that does not take it)."""

    async def resume(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        return opened("auto")

    async def set_option(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        return {"configOptions": opened(answer_mode or params["value"])["configOptions"]}

    async def set_mode(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    return {
        "session/resume": resume,
        "session/set_config_option": set_option,
        "session/set_mode": set_mode,
    }


def sent(agent: ScriptedAgent, method: str) -> list[dict[str, Any]]:
    return [m["params"] for m in agent.received if m.get("method") == method]


async def test_deny_puts_the_session_in_the_asking_mode_and_checks_the_answer() -> None:
    methods = agent_methods()
    async with scripted_client(AcpOptions(), scenario=saying(CLAUDE), methods=methods) as (
        client,
        agent,
    ):
        session = await client.resume_session("old")
        assert session.current_mode_id == "default"
    [params] = sent(agent, "session/set_config_option")
    assert (params["configId"], params["value"]) == ("mode", "default")


@pytest.mark.parametrize(
    ("options", "why"),
    [
        (AcpOptions(permissions="all"), "answers allow everything"),
        (AcpOptions(mode="auto"), "the user chose the mode"),
    ],
)
async def test_nothing_is_set_when_everything_is_allowed_or_the_mode_is_chosen(
    options: AcpOptions, why: str
) -> None:
    async with scripted_client(options, scenario=saying(CLAUDE), methods=agent_methods()) as (
        client,
        agent,
    ):
        session = await client.resume_session("old")
        assert session.current_mode_id == "auto", why
    assert sent(agent, "session/set_config_option") == []
    assert sent(agent, "session/set_mode") == (
        [{"sessionId": "old", "modeId": "auto"}] if options.mode else []
    )


async def test_a_callback_makes_it_ask_as_a_preset_does() -> None:
    async def allow_nothing(request: object) -> None:
        return None

    async with scripted_client(
        AcpOptions(permissions="all"),
        scenario=saying(CLAUDE),
        methods=agent_methods(),
        permission_handler=allow_nothing,
    ) as (client, _):
        assert (await client.resume_session("old")).current_mode_id == "default"


async def test_an_agent_that_does_not_take_the_mode_is_refused() -> None:
    async with scripted_client(
        AcpOptions(), scenario=saying(CLAUDE), methods=agent_methods("auto")
    ) as (client, _):
        with pytest.raises(PermissionsUnenforceable) as refused:
            await client.resume_session("old")
    assert str(refused.value) == (
        f"acp:{CLAUDE} was asked for mode 'default', which asks before acting, and answered "
        "that it is in 'auto': pass --mode (AcpOptions.mode) to run it in a mode of your "
        "choosing instead"
    )


async def test_an_agent_without_its_asking_mode_is_refused() -> None:
    async def resume(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        return opened("auto", ["auto", "bypassPermissions"])

    methods = {"session/resume": resume}
    async with scripted_client(AcpOptions(), scenario=saying(CLAUDE), methods=methods) as (
        client,
        agent,
    ):
        with pytest.raises(PermissionsUnenforceable, match="offers no mode 'default'"):
            await client.resume_session("old")
    assert sent(agent, "session/set_config_option") == sent(agent, "session/set_mode") == []


async def test_an_agent_made_to_ask_when_started_is_refused_when_it_was_not() -> None:
    async with scripted_client(AcpOptions(), scenario=saying("OpenCode", capabilities=None)) as (
        client,
        _,
    ):
        with pytest.raises(PermissionsUnenforceable, match="has no mode that asks"):
            await client.new_session()


def install(folder: Path, package: str, version: str) -> tuple[str]:
    """A fake npm install of ``package``'s ``codex-acp`` launcher; its command."""
    package_dir = folder / "node_modules" / package
    package_dir.mkdir(parents=True)
    (package_dir / "package.json").write_text(json.dumps({"name": package, "version": version}))
    (package_dir / "cli.js").write_text("#!/bin/sh\n")
    (folder / "node_modules" / ".bin").mkdir()
    (folder / "node_modules" / ".bin" / "codex-acp").symlink_to(package_dir / "cli.js")
    return (str(folder / "node_modules" / ".bin" / "codex-acp"),)


def test_opencode_and_codex_0_16_are_started_asking_and_others_as_they_are(
    tmp_path: Path,
) -> None:
    opencode = asking_launch(AgentLaunch(command=("/opt/bin/opencode", "acp")))
    assert opencode.env["OPENCODE_PERMISSION"] == (
        '{"edit":"ask","bash":"ask","webfetch":"ask","external_directory":"ask"}'
    )
    old = install(tmp_path / "old", "@zed-industries/codex-acp", "0.16.0")
    assert asking_launch(AgentLaunch(command=old)).command == (
        *old,
        "-c",
        'approval_policy="untrusted"',
    )
    new = install(tmp_path / "new", "@agentclientprotocol/codex-acp", "2.6.0")
    for command in (new, ("claude-agent-acp",), ("qwen", "--acp")):
        launch = AgentLaunch(command=command)
        assert asking_launch(launch) == launch
