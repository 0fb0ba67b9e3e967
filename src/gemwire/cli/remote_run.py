"""``gemwire run --server URL``: the prompt runs on a ``gemwire serve`` server, shown as a
local run is (the same outputs: live view, plain, ``--json``, ``--quiet``)."""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from gemwire.cli.exit_codes import (
    EXIT_AUTH,
    EXIT_NOT_FOUND,
    EXIT_TURN_FAILED,
    EXIT_USAGE,
    exit_status,
)

if TYPE_CHECKING:
    from gemwire.cli.live import Output
    from gemwire.runners.acp import AcpTurnResult

__all__ = ("run_from_command", "run_on_server")

_PRESETS = {"yolo": "all", "auto_edit": "edits"}
"""``--approval-mode`` as the session's permission preset on the server; the rest deny."""

_CLOSE_TIMEOUT = 30.0
"""Seconds the server has to close the session once the run ended."""

_REFUSED = {
    "not_found": EXIT_NOT_FOUND,
    "unreachable": EXIT_NOT_FOUND,
    "unauthorized": EXIT_AUTH,
    "forbidden": EXIT_USAGE,
}
"""Exit statuses of a server that cannot be reached (4) or refuses the token (5), as
`gemwire acp --connect` exits for its endpoint; a ``--cwd`` outside the server's roots is
a usage error (2): the request, not the credentials, is wrong. Else 1."""


def run_on_server(
    prompt: str,
    *,
    url: str,
    token: str | None,
    agent: str,
    cwd: str | None,
    model: str | None,
    approval_mode: str | None,
    output: Output,
) -> None:
    """Run ``prompt`` in a new session of ``agent`` on the server; exits as `gemwire run`
    does (a signal cancels the turn: 130, 143, 129)."""

    import anyio

    from gemwire.cli.live import LiveOutput
    from gemwire.cli.signals import SignalStop
    from gemwire.errors import RemoteError, ServerUnreachable
    from gemwire.events import TurnCompleted, TurnError
    from gemwire.runners.acp import PermissionHandler

    try:
        from gemwire.remote import RemoteSession, connect
    except ImportError as exc:  # no [remote] extra: the message says what to install
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_USAGE)

    shown = {"agent": agent}  # the events' own name of the agent (acp:gemini-cli, ...)
    handler: PermissionHandler | None = None
    if isinstance(output, LiveOutput) and sys.stdin.isatty() and approval_mode is None:
        handler = output.permission_handler(lambda: shown["agent"])
    preset = "ask" if handler is not None else _PRESETS.get(approval_mode or "", "deny")
    stop = SignalStop()

    async def go() -> AcpTurnResult | TurnCompleted:
        async with connect(url, token=token) as server:
            session = await server.new_session(
                agent, cwd=cwd, model=model, permissions=preset, permission_handler=handler
            )
            try:
                return await turn_of(session)
            finally:
                # Else its agent idles on the server until --idle-timeout, and counts
                # against --max-sessions. A server gone has no session left to close.
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(_CLOSE_TIMEOUT),
                    contextlib.suppress(RemoteError),
                ):
                    await session.close()

    async def turn_of(session: RemoteSession) -> AcpTurnResult | TurnCompleted:
        def ended(kind: str, message: str) -> TurnCompleted:
            # The turn's own end will not come: still end with one turn_completed.
            lost = TurnCompleted(
                agent=shown["agent"],
                session_id=session.session_id,
                ok=False,
                stop_reason="cancelled" if kind == "cancelled" else "error",
                error=TurnError(kind=kind, message=message),
                answer="",
            )
            output.show(lost)
            return lost

        # A signal cancels the turn on the server; when the server has no turn to cancel
        # (it ended there, or the server went away), or at a second signal, the client
        # stops waiting for it.
        waiting = anyio.CancelScope()

        async def cancel(reason: str) -> None:
            try:
                running = await turn.cancel()
            except RemoteError:
                running = False
            if not running:
                waiting.cancel()

        with waiting:  # around the turn's exit too: it waits for nothing more
            async with session.prompt(prompt) as turn:
                stop.cancels(cancel, give_up=waiting.cancel)
                try:
                    async for event in turn:
                        shown["agent"] = event.agent
                        output.show(event)
                except ServerUnreachable as exc:
                    return ended("crashed", str(exc))
        if waiting.cancelled_caught:
            return ended("cancelled", "the run was stopped before the server ended its turn")
        return turn.result

    try:
        with output:
            result: AcpTurnResult | TurnCompleted | None = stop.run(go)
            output.close()
    except RemoteError as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(_REFUSED.get(exc.kind, EXIT_TURN_FAILED))
    stop.exit_if_stopped()
    assert result is not None
    sys.exit(exit_status(result))


_ON_SERVER = frozenset({"model", "approval_mode", "yolo", "cwd"})
"""What `gemwire run --server` takes of the options for a local run."""


def run_from_command(
    ctx: click.Context,
    prompt: str,
    server: str | None,
    token: str | None,
    agent: str | None,
    as_json: bool,
    quiet: bool,
    verbose: bool,
    options: dict[str, object],
) -> None:
    """`gemwire run` with ``--server`` (or ``--agent``): what a local run takes of its
    options goes to the server; the rest is a usage error."""
    from gemwire.cli.live import open_output

    if server is None:
        raise click.UsageError("--agent needs --server (locally, `gemwire acp --agent`)")
    local = [
        name
        for name in ctx.params
        if name not in _ON_SERVER
        and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
        and ctx.params[name] not in (None, False, ())
        and name not in ("prompt", "server", "token", "agent", "as_json", "quiet", "verbose")
    ]
    if local:
        flags = ", ".join(sorted(_flag(ctx, name) for name in local))
        raise click.UsageError(f"{flags}: not available with --server")
    cwd = options.get("cwd")
    output = open_output(as_json=as_json, quiet=quiet, verbose=verbose, cwd=None)
    run_on_server(
        prompt,
        url=server,
        token=token,
        agent=agent or "gemini",
        cwd=str(cwd) if cwd else None,
        model=str(options["model"]) if options.get("model") else None,
        approval_mode=str(options["approval_mode"]) if options.get("approval_mode") else None,
        output=output,
    )


def _flag(ctx: click.Context, name: str) -> str:
    """The option's own long flag, as a person typed it (``extra_args``: ``--gemini-arg``)."""
    option = next(p for p in ctx.command.params if p.name == name)
    return next((flag for flag in option.opts if flag.startswith("--")), option.opts[0])
