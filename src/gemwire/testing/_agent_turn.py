"""How `ScriptedAgent` plays a turn of its scenario: each step as the ACP messages it stands
for, built from `gemwire.wire.acp`'s types."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec

from gemwire.testing.agent_scenario import (
    AwaitCancel,
    PromptError,
    ReadTextFile,
    RequestPermission,
    RunCommand,
    Say,
    ScriptedError,
    Sleep,
    Step,
    Think,
    Update,
    WriteTextFile,
)
from gemwire.wire import acp

if TYPE_CHECKING:
    from gemwire.testing.scripted_agent import ScriptedAgent

__all__ = ("play",)

T = TypeVar("T")


async def play(
    agent: ScriptedAgent, session_id: str, steps: list[Step], cancelled: anyio.Event
) -> None:
    """Do ``steps`` in order, each to its end; ``cancelled`` is set by the turn's
    ``session/cancel``."""
    for step in steps:
        await _step(agent, session_id, step, cancelled)


async def _step(agent: ScriptedAgent, sid: str, step: Step, cancelled: anyio.Event) -> None:
    match step:
        case Say():
            await agent.say(sid, step.text)
        case Think():
            await agent.think(sid, step.text)
        case Update():
            fields = dict(step.update)
            await agent.update(sid, fields.pop("sessionUpdate"), **fields)
        case RequestPermission():
            request = acp.RequestPermissionRequest(
                session_id=sid, tool_call=step.tool_call, options=step.options
            )
            answer = await agent.request("session/request_permission", request)
            chosen = _decoded(agent, answer, acp.RequestPermissionResponse)
            if chosen is not None:
                key = getattr(chosen.outcome, "option_id", "cancelled")
                await play(agent, sid, step.then.get(key, []), cancelled)
        case ReadTextFile():
            path = _path(agent, sid, step.path)
            read = acp.ReadTextFileRequest(
                session_id=sid, path=path, line=step.line, limit=step.limit
            )
            await agent.request("fs/read_text_file", read)
        case WriteTextFile():
            path = _path(agent, sid, step.path)
            write = acp.WriteTextFileRequest(session_id=sid, path=path, content=step.content)
            await agent.request("fs/write_text_file", write)
        case RunCommand():
            await _run_command(agent, sid, step)
        case Sleep():
            await anyio.sleep(step.seconds)
        case AwaitCancel():
            await cancelled.wait()
        case PromptError():
            raise ScriptedError(step.message, code=step.code, data=step.data)


async def _run_command(agent: ScriptedAgent, sid: str, step: RunCommand) -> None:
    create = acp.CreateTerminalRequest(
        session_id=sid,
        command=step.command,
        args=step.args,
        env=step.env,
        cwd=None if step.cwd is None else _path(agent, sid, step.cwd),
        output_byte_limit=step.output_byte_limit,
    )
    answer = await agent.request("terminal/create", create)
    created = _decoded(agent, answer, acp.CreateTerminalResponse)
    if created is None:
        return
    tid = created.terminal_id
    await agent.request(
        "terminal/wait_for_exit", acp.WaitForTerminalExitRequest(session_id=sid, terminal_id=tid)
    )
    await agent.request(
        "terminal/output", acp.TerminalOutputRequest(session_id=sid, terminal_id=tid)
    )
    await agent.request(
        "terminal/release", acp.ReleaseTerminalRequest(session_id=sid, terminal_id=tid)
    )


def _path(agent: ScriptedAgent, session_id: str, path: str) -> str:
    """``path`` in the session's folder, as ACP wants paths: absolute."""
    return os.path.join(agent.cwds.get(session_id, ""), path)


def _decoded(agent: ScriptedAgent, answer: dict[str, Any], kind: type[T]) -> T | None:
    """The answer's result as ``kind``; ``None`` for an error (the client's to give), or
    a problem of the agent's for a result that is not one."""
    if "result" not in answer:
        return None
    try:
        return msgspec.convert(answer["result"], kind)
    except msgspec.ValidationError as exc:
        agent.problems.append(f"{kind.__name__}: {exc}: {answer['result']!r}")
        return None
