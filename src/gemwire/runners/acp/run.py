"""One turn, start to end: `run_acp` (async) and `run_acp_sync`."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from gemwire.errors import InvalidOptions
from gemwire.runners._host_signals import HostSignals, host_signals
from gemwire.runners.acp.channel import AgentChannel
from gemwire.runners.acp.client import AcpClient
from gemwire.runners.acp.elicitation import ElicitationHandler
from gemwire.runners.acp.options import AcpOptions, AcpTurnResult, Prompt
from gemwire.runners.acp.permissions import PermissionHandler
from gemwire.runners.acp.terminals import TerminalPolicy
from gemwire.runners.acp.turn import AcpTurn

__all__ = ("run_acp", "run_acp_sync")


@asynccontextmanager
async def run_acp(
    prompt: Prompt,
    options: AcpOptions,
    *,
    permission_handler: PermissionHandler | None = None,
    terminal_policy: TerminalPolicy | None = None,
    credentials: Mapping[str, Any] | None = None,
    channel: AgentChannel | None = None,
    elicitation_handler: ElicitationHandler | None = None,
) -> AsyncGenerator[AcpTurn]:
    """Start the agent, open a session (or load ``options.load_session``, or continue
    ``options.resume_session``; the client puts it in ``options.mode``), set
    ``options.model``, and send ``prompt``: one turn, start to end.
    ``channel``: the agent's, if not the process of ``options.command`` (`AcpClient`).

    Iterate the turn for events (``session_started`` first) and read ``turn.result``.
    Failures before the prompt raise (`InvalidOptions`, `AgentNotFound`, `AgentCrashed`,
    `AgentRequestFailed`, `RunTimedOut`); every failure after it ends in the
    ``turn_completed`` event.
    """
    if options.load_session and options.resume_session:
        raise InvalidOptions("load_session and resume_session: give one session to open")
    async with AcpClient(
        options,
        permission_handler=permission_handler,
        terminal_policy=terminal_policy,
        credentials=credentials,
        channel=channel,
        elicitation_handler=elicitation_handler,
    ) as client:
        if options.load_session:
            session = await client.load_session(options.load_session)
        elif options.resume_session:
            session = await client.continue_session(options.resume_session)
        else:
            session = await client.new_session()
        if options.model:
            await session.set_model(options.model)
        async with session.prompt(prompt) as turn:
            yield turn


def run_acp_sync(
    prompt: Prompt,
    options: AcpOptions,
    *,
    permission_handler: PermissionHandler | None = None,
    terminal_policy: TerminalPolicy | None = None,
    credentials: Mapping[str, Any] | None = None,
) -> AcpTurnResult:
    """`run_acp` for synchronous callers: runs the turn to the end and returns its result.

    In the main thread, SIGTERM and SIGHUP during the turn stop it cleanly first (as
    ``AcpTurn.stop``: error kind ``cancelled``, the message names the signal, the agent is
    stopped) and are then delivered again to the handler that was there before: by
    default, the process ends as it would have, with nothing of the turn left behind.
    """

    async def main(signals: HostSignals) -> AcpTurnResult:
        async with (
            run_acp(
                prompt,
                options,
                permission_handler=permission_handler,
                terminal_policy=terminal_policy,
                credentials=credentials,
            ) as turn,
            anyio.create_task_group() as tg,
        ):
            await tg.start(signals.cancel_on_signal, turn.stop)
            result = await turn.wait()
            tg.cancel_scope.cancel()
        return result

    with host_signals() as signals:
        return anyio.run(main, signals)
