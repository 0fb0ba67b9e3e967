"""``gemwire acp``: one prompt through any ACP agent, shown live (or as JSON lines)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import click

from gemwire.cli.exit_codes import EXIT_AUTH, EXIT_NOT_FOUND, exit_status
from gemwire.cli.options import AGENT_NAMES, output_options

if TYPE_CHECKING:
    from gemwire.cli.live import Output
    from gemwire.events import TurnCompleted, TurnError
    from gemwire.runners.acp import AgentChannel

__all__ = ("acp",)

_PERMISSIONS = ("ask", "deny", "reads", "edits", "all")


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("prompt")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--agent",
    type=AGENT_NAMES,
    help="A built-in agent instead of COMMAND: the pinned install, node_modules/.bin or "
    "$PATH, or the command in $GEMWIRE_AGENT_<NAME> (docs/agents.md).",
)
@click.option("--cwd", help="The session's folder (default: here).")
@click.option("--add-dir", "include_directories", multiple=True, help="More session folders.")
@click.option(
    "--permissions",
    type=click.Choice(_PERMISSIONS),
    help="Answer the agent's permission requests: ask at the keyboard, or a preset "
    "(deny, reads, edits, all). Default: ask on a terminal, else deny.",
)
@click.option(
    "--mode",
    help="Session mode to set first (e.g. Gemini's yolo, plan), instead of the mode that asks "
    "which gemwire sets under --permissions other than all; needed to run an agent gemwire "
    "does not know the modes of under them (docs/acp.md).",
)
@click.option("--model", help="Model to set first.")
@click.option("--load", "load_session", help="Load this saved session instead of a new one.")
@click.option(
    "--resume",
    "resume_session",
    help="Continue this saved session: without replaying it where the agent offers "
    "session/resume, else as --load.",
)
@click.option("--timeout", type=float, help="Seconds for the turn.")
@click.option(
    "--connect",
    metavar="URL",
    help="A remote agent instead of COMMAND: an ACP endpoint, ws(s)://HOST/acp/AGENT "
    "(WebSocket) or http(s)://... (Streamable HTTP), such as `gemwire serve` has.",
)
@click.option(
    "--token",
    envvar="GEMWIRE_TOKEN",
    help="The endpoint's token ($GEMWIRE_TOKEN; else the URL's ?token=).",
)
@output_options
def acp(
    prompt: str,
    command: tuple[str, ...],
    as_json: bool,
    quiet: bool,
    verbose: bool,
    permissions: str | None,
    agent: str | None,
    connect: str | None,
    token: str | None,
    **settings: object,
) -> None:
    """Send PROMPT (- reads it from stdin) to the ACP agent started by COMMAND.

    \b
    gemwire acp "fix the failing test" --permissions edits -- gemini --acp
    gemwire acp --json "summarize README.md" -- npx @zed-industries/claude-code-acp
    gemwire acp --agent claude "summarize README.md"
    gemwire acp --connect ws://build-box:8765/acp/gemini --token T "summarize README.md"
    """
    import anyio
    import msgspec

    from gemwire.cli.live import LiveOutput, open_output
    from gemwire.cli.signals import REASONS, SignalStop
    from gemwire.errors import (
        AgentCrashed,
        AgentNotFound,
        AgentRequestFailed,
        AuthFailed,
        InvalidOptions,
        RunTimedOut,
    )
    from gemwire.events import TurnCompleted, TurnError
    from gemwire.runners.acp import (
        AcpOptions,
        AcpTurnResult,
        PermissionHandler,
        run_acp,
        turn_error,
    )
    from gemwire.runners.acp.claude_code import explain_root_refusal
    from gemwire.runners.agents import agent_identity

    serve_reads = False
    agent_env: dict[str, str] = {}
    channel = None
    if connect is not None:
        if command or agent is not None:
            raise click.UsageError("give --connect, --agent or COMMAND: one of them")
        channel = _remote(connect, token)
        command = (_endpoint_name(connect),)  # its name, until it says
    elif agent is not None:
        if command:
            raise click.UsageError("give --agent or COMMAND, not both")
        command, serve_reads, agent_env = _built_in(agent)
    elif not command:
        raise click.UsageError("give the agent's COMMAND (after --), or --agent NAME")
    if settings.get("load_session") and settings.get("resume_session"):
        raise click.UsageError("--load and --resume: give one session to open")
    if prompt == "-":
        prompt = sys.stdin.read()
    name = agent_identity(command)
    cwd = str(Path(str(settings.get("cwd") or ".")).resolve())
    output = open_output(as_json=as_json, quiet=quiet, verbose=verbose, cwd=cwd)
    interactive = isinstance(output, LiveOutput) and sys.stdin.isatty()
    if permissions == "ask" and not interactive:
        raise click.UsageError("--permissions ask needs a terminal (and no --json or --quiet)")
    permissions = permissions or ("ask" if interactive else "deny")
    handler: PermissionHandler | None = None
    if permissions == "ask":
        assert isinstance(output, LiveOutput)
        handler = output.permission_handler(lambda: name)
    elicitation = None
    if interactive:  # the agent's questions (elicitation/create) are asked at the keyboard
        from gemwire.cli.elicitation import keyboard_elicitation

        assert isinstance(output, LiveOutput)
        elicitation = keyboard_elicitation(output, name)
    options = AcpOptions(
        command=command if channel is None else (),
        permissions="deny" if permissions == "ask" else permissions,  # type: ignore[arg-type]
        serve_reads=serve_reads,
        env=agent_env,
        **{k: v for k, v in settings.items() if v is not None},  # type: ignore[arg-type]
    )

    stop = SignalStop()

    async def go() -> AcpTurnResult | TurnCompleted:
        agent = name
        with anyio.CancelScope() as giving_up:
            async with run_acp(
                prompt,
                options,
                permission_handler=handler,
                elicitation_handler=elicitation,
                channel=channel,
            ) as turn:
                # A second signal: stop waiting for the agent to end the turn (its grace
                # is `CANCEL_GRACE`); the client ends it and stops the agent.
                stop.cancels(turn.stop, give_up=giving_up.cancel)
                async for event in turn:
                    agent = event.agent
                    output.show(event)
        if not giving_up.cancelled_caught:
            return turn.result
        # The turn's own turn_completed was left unread: show the one its result says.
        done = turn.result
        completed = TurnCompleted(
            agent=agent,
            session_id=done.session_id,
            ok=done.ok,
            stop_reason=done.stop_reason,
            error=done.error,
            answer=done.answer,
            usage=done.usage,
            duration_ms=round(done.duration_s * 1000),
        )
        output.show(completed)
        return completed

    try:
        with output:
            try:
                result: AcpTurnResult | TurnCompleted | None = stop.run(go)
            except (AgentCrashed, AgentRequestFailed, RunTimedOut) as exc:
                # The agent failed before the turn began: still end with one turn_completed,
                # its error typed as a turn types it.
                method = exc.method if isinstance(exc, AgentRequestFailed) else ""
                error = turn_error(exc, method)
                environ = {**os.environ, **options.env} if options.inherit_env else options.env
                # Claude Code as root says only "Query closed before response received".
                explained = explain_root_refusal(error.message, environ)
                if explained is not None:
                    error = msgspec.structs.replace(error, message=explained)
                result = _before_the_turn(output, name, "error", error)
            if result is None:  # a signal while the agent was starting
                assert stop.caught is not None
                error = TurnError(kind="cancelled", message=REASONS[stop.caught])
                result = _before_the_turn(output, name, "cancelled", error)
            output.close()
    except AgentNotFound as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except AuthFailed as exc:  # a remote endpoint refused the token
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_AUTH)
    except InvalidOptions as exc:  # e.g. a --cwd that does not exist
        raise click.UsageError(str(exc)) from exc
    stop.exit_if_stopped()
    assert result is not None
    sys.exit(exit_status(result))


def _before_the_turn(
    output: Output, agent: str, stop_reason: str, error: TurnError
) -> TurnCompleted:
    """The turn_completed of a turn that never began: the stream still ends with one."""
    from gemwire.events import TurnCompleted

    turn = TurnCompleted(agent=agent, ok=False, stop_reason=stop_reason, error=error, answer="")
    output.show(turn)
    return turn


def _remote(url: str, token: str | None) -> AgentChannel:
    """The channel to a remote agent's endpoint (``--connect``)."""
    from gemwire.errors import InvalidOptions
    from gemwire.runners.acp.remote import remote_channel

    try:
        return remote_channel(url, token=token)
    except InvalidOptions as exc:
        raise click.BadParameter(str(exc), param_hint="--connect") from exc


def _endpoint_name(url: str) -> str:
    """The agent's name in an endpoint's URL (its last path segment; never the query,
    which may hold the token).

    >>> _endpoint_name("ws://h:8765/acp/gemini?token=s3cret"), _endpoint_name("https://h/")
    ('gemini', 'remote')
    """
    return urlsplit(url).path.rstrip("/").rpartition("/")[2] or "remote"


def _built_in(name: str) -> tuple[tuple[str, ...], bool, dict[str, str]]:
    """The command of a built-in agent, the client options and the environment it needs."""
    from gemwire.errors import AgentNotFound
    from gemwire.runners.agents import AGENTS, resolve_agent

    try:
        resolved = resolve_agent(name)
    except AgentNotFound as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    spec = AGENTS[resolved.name]
    return resolved.command, spec.serve_reads, spec.env
