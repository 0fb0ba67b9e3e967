"""``gemwire run``: Gemini CLI on a prompt, shown live (or as JSON lines, or just the answer)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from gemwire.cli.exit_codes import (
    EXIT_CANCELLED,
    EXIT_HANGUP,
    EXIT_NOT_FOUND,
    EXIT_TERMINATED,
    EXIT_TURN_FAILED,
    for_error_kind,
)

if TYPE_CHECKING:
    from anyio.abc import TaskStatus

    from gemwire import GeminiOptions, GeminiRun, RunResult
    from gemwire.cli.live import Output

__all__ = ("output_options", "run", "show_run")

F = TypeVar("F", bound=Callable[..., Any])

_STOPPING = {
    signal.SIGINT: "interrupted (Ctrl-C)",
    signal.SIGTERM: "stopped by SIGTERM",
    signal.SIGHUP: "stopped by SIGHUP (the terminal closed)",
}
"""The signals that cancel a run, and what the turn's error says."""
_SIGNAL_EXITS = {signal.SIGTERM: EXIT_TERMINATED, signal.SIGHUP: EXIT_HANGUP}

_SECONDS = click.FloatRange(min=0, min_open=True)
_COUNT = click.IntRange(min=0)


def output_options(command: F) -> F:
    """``--json``, ``--quiet`` and ``--verbose``: the outputs every streaming command offers."""
    for option in reversed(
        (
            click.option(
                "--json", "as_json", is_flag=True, help="Print normalized events as JSON lines."
            ),
            click.option("-q", "--quiet", is_flag=True, help="Print only the final answer."),
            click.option("-v", "--verbose", is_flag=True, help="Show every line of tool output."),
        )
    ):
        command = option(command)
    return command


@click.command()
@click.argument("prompt")
@click.option("-m", "--model", help="Model or alias (auto, pro, flash, flash-lite).")
@click.option(
    "--approval-mode",
    type=click.Choice(["default", "auto_edit", "yolo", "plan"]),
    help="Which tools run without asking; headless, the rest are not offered.",
)
@click.option("-y", "--yolo", is_flag=True, help="Same as --approval-mode yolo.")
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False),
    help="The workspace to run in (default: here).",
)
@click.option("--include-directories", multiple=True, help="More workspace folders (repeatable).")
@click.option("--policy", "policy_files", multiple=True, help="Policy file or folder (repeatable).")
@click.option(
    "--allowed-tools", multiple=True, help="Tools allowed without asking (deprecated upstream)."
)
@click.option("-e", "--extensions", multiple=True, help="Extensions to use (repeatable).")
@click.option("-s", "--sandbox", is_flag=True, help="Run tools in Gemini's sandbox.")
@click.option("-r", "--resume", help="Resume a session: latest, an index, or a session id.")
@click.option("--session-id", help="Start a new session with this id.")
@click.option("--gemini-home", help="The folder holding .gemini (GEMINI_CLI_HOME).")
@click.option("--executable", help="The gemini executable to run.")
@click.option("--timeout", type=_SECONDS, help="Seconds for the whole run.")
@click.option("--idle-timeout", type=_SECONDS, help="Seconds without output before stopping.")
@click.option("--max-tool-calls", type=_COUNT, help="Stop after this many tool calls.")
@click.option("--max-model-turns", type=_COUNT, help="Stop after this many model turns.")
@click.option("--max-rate-limit-retries", type=_COUNT, help="Stop after this many 429 retries.")
@click.option(
    "-o",
    "--output-format",
    type=click.Choice(["stream-json", "json"]),
    help="What to ask Gemini CLI for (json: the answer's last turn only, no tool calls).",
)
@output_options
@click.pass_context
def run(
    ctx: click.Context,
    /,
    prompt: str,
    yolo: bool,
    as_json: bool,
    quiet: bool,
    verbose: bool,
    include_directories: tuple[str, ...],
    policy_files: tuple[str, ...],
    allowed_tools: tuple[str, ...],
    extensions: tuple[str, ...],
    **options: object,
) -> None:
    """Run Gemini CLI on PROMPT (- reads it from stdin) and show what happens.

    Defaults for the options come from `gemwire config` (file, then GEMWIRE_* variables).

    \b
    gemwire run "fix the failing test" --approval-mode auto_edit
    gemwire run --json -y "summarize README.md" > events.jsonl
    gemwire run -q "one word for blue" | tr a-z A-Z
    """

    from gemwire import (
        AgentNotFound,
        GeminiOptions,
        GemwireError,
        InvalidOptions,
        PromptTooLarge,
        UnsupportedVersion,
    )
    from gemwire.cli.live import open_output

    if prompt == "-":
        prompt = sys.stdin.read()
    if yolo:
        # -y beats a configured approval mode; it contradicts one given as a flag.
        given = ctx.get_parameter_source("approval_mode") == ParameterSource.COMMANDLINE
        if options["approval_mode"] not in (None, "yolo") and given:
            raise click.UsageError("--yolo and --approval-mode disagree")
        options["approval_mode"] = "yolo"
    run_options = GeminiOptions(
        include_directories=include_directories,
        policy_files=policy_files,
        allowed_tools=allowed_tools,
        extensions=extensions,
        **{k: v for k, v in options.items() if v is not None},  # type: ignore[arg-type]
    )
    cwd = str(Path(run_options.cwd or os.getcwd()).resolve())
    output = open_output(as_json=as_json, quiet=quiet, verbose=verbose, cwd=cwd)

    try:
        result = show_run(prompt, run_options, output)
    except (AgentNotFound, UnsupportedVersion) as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except (PromptTooLarge, InvalidOptions) as exc:
        raise click.UsageError(str(exc)) from exc
    except KeyboardInterrupt:
        sys.exit(EXIT_CANCELLED)
    except GemwireError as exc:  # nothing started: an unsafe lock folder, no resources
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_TURN_FAILED)
    sys.exit(0 if result.ok else for_error_kind(result.error.kind if result.error else None))


def show_run(prompt: str, options: GeminiOptions, output: Output) -> RunResult:
    """Run Gemini CLI on ``prompt``, every event shown in ``output``, closed with the
    resume line; the result.

    Ctrl-C, SIGTERM and SIGHUP stop the run as `GeminiRun.cancel` does: the events go on
    to ``turn_completed`` (kind ``cancelled``) and the view keeps what it showed. After
    SIGTERM or SIGHUP the process then exits 143 or 129, as a shell reports them.
    """
    import anyio

    from gemwire import run_gemini

    caught: list[signal.Signals] = []

    async def stop_on_signal(
        handle: GeminiRun, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        with anyio.open_signal_receiver(*_STOPPING) as received:
            task_status.started()
            async for sig in received:
                caught.append(sig)
                await handle.cancel(_STOPPING[sig])

    async def go() -> RunResult:
        async with run_gemini(prompt, options) as handle, anyio.create_task_group() as tg:
            await tg.start(stop_on_signal, handle)
            async for event in handle:
                output.show(event)
            tg.cancel_scope.cancel()
        return handle.result

    with output:
        result = anyio.run(go)
        output.close(result.resume.command if result.resume else None)
    if caught and caught[0] in _SIGNAL_EXITS:
        sys.exit(_SIGNAL_EXITS[caught[0]])
    return result
