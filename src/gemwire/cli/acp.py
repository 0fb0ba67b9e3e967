"""``gemwire acp``: one prompt through any ACP agent, as a transcript or as JSON events."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import click

from gemwire.cli.transcript import Transcript
from gemwire.errors import AgentCrashed, AgentNotFound, AgentRequestFailed
from gemwire.events import Event, TurnCompleted, TurnError, encode_event
from gemwire.runners.acp import PERMISSION_PRESETS, AcpOptions, AcpTurnResult, run_acp

__all__ = ("acp",)

# The exit statuses of gemwire.cli (kept in step with its docstring).
EXIT_OK, EXIT_TURN_FAILED, EXIT_NOT_FOUND, EXIT_TIMEOUT, EXIT_CANCELLED = 0, 1, 4, 124, 130


def _exit_status(result: AcpTurnResult | None) -> int:
    if result is None:
        return EXIT_TURN_FAILED
    if result.ok:
        return EXIT_OK
    kind = result.error.kind if result.error else ""
    return {"timeout": EXIT_TIMEOUT, "cancelled": EXIT_CANCELLED}.get(kind, EXIT_TURN_FAILED)


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("prompt")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--json", "as_json", is_flag=True, help="Print normalized events as JSON lines.")
@click.option("--cwd", help="The session's folder (default: here).")
@click.option("--add-dir", "additional_directories", multiple=True, help="More session folders.")
@click.option(
    "--permissions",
    type=click.Choice(list(PERMISSION_PRESETS)),
    default="deny",
    show_default=True,
    help="Which tool calls to allow when the agent asks.",
)
@click.option("--mode", help="Session mode to set first (e.g. Gemini's yolo, plan).")
@click.option("--model", help="Model to set first.")
@click.option("--load", "load_session", help="Load this saved session instead of a new one.")
@click.option("--timeout", type=float, help="Seconds for the turn.")
def acp(
    prompt: str,
    command: tuple[str, ...],
    as_json: bool,
    **settings: object,
) -> None:
    """Send PROMPT (- reads it from stdin) to the ACP agent started by COMMAND.

    \b
    gemwire acp "fix the failing test" --permissions edits -- gemini --acp
    gemwire acp --json "summarize README.md" -- npx @zed-industries/claude-code-acp
    """
    if prompt == "-":
        prompt = sys.stdin.read()
    options = AcpOptions(
        command=command,
        **{k: v for k, v in settings.items() if v is not None},  # type: ignore[arg-type]
    )
    transcript = Transcript(sys.stdout)

    def show(event: Event) -> None:
        if as_json:
            sys.stdout.buffer.write(encode_event(event))
            sys.stdout.buffer.flush()
        else:
            transcript.write(event)
            sys.stdout.flush()

    async def go() -> AcpTurnResult:
        async with run_acp(prompt, options) as turn:
            async for event in turn:
                show(event)
        return turn.result

    try:
        result = anyio.run(go)
    except AgentNotFound as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except (AgentCrashed, AgentRequestFailed) as exc:
        # The agent failed before the turn began: still end the stream with one turn.
        kind = "crashed" if isinstance(exc, AgentCrashed) else "agent"
        if isinstance(exc, AgentRequestFailed) and exc.code == -32000:
            kind = "auth"
        message = f"{exc.method}: {exc}" if isinstance(exc, AgentRequestFailed) else str(exc)
        error = TurnError(kind=kind, message=message, exit_code=getattr(exc, "exit_code", None))
        show(
            TurnCompleted(
                agent=f"acp:{Path(command[0]).name}",
                ok=False,
                stop_reason="error",
                error=error,
                answer="",
            )
        )
        sys.exit(EXIT_TURN_FAILED)
    except KeyboardInterrupt:
        sys.exit(EXIT_CANCELLED)
    sys.exit(_exit_status(result))
