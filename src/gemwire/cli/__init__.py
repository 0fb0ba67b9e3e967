"""The ``gemwire`` command line (``pip install 'gemwire[cli]'``); the only layer importing click.

Exit status (stable): 0 the turn succeeded; 1 the turn failed (the error kind is in the
output); 2 usage error; 3 the input is not the protocol (``replay --strict``); 4 the
Gemini CLI was not found or is too old; 124 the run timed out; 130 the run was cancelled
(Ctrl-C, or a budget).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import BinaryIO

import anyio
import click

from gemwire import (
    AgentNotFound,
    GeminiOptions,
    MalformedMessageError,
    PromptTooLarge,
    RunResult,
    UnsupportedVersion,
    __version__,
    replay_gemini_stream,
    run_gemini,
)
from gemwire.cli.transcript import Transcript
from gemwire.events import Event, TurnCompleted, encode_event

__all__ = ("main",)

EXIT_OK, EXIT_TURN_FAILED, EXIT_PROTOCOL, EXIT_NOT_FOUND = 0, 1, 3, 4
EXIT_TIMEOUT, EXIT_CANCELLED = 124, 130


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gemwire")
def main() -> None:
    """Run Gemini CLI and ACP agents headlessly; one normalized event stream."""


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    # read1 returns what is there now, so `gemini ... | gemwire replay -` is live.
    read = getattr(stream, "read1", stream.read)
    while chunk := read(1 << 16):
        yield chunk


@main.command()
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--json", "as_json", is_flag=True, help="Print normalized events as JSON lines.")
@click.option("--strict", is_flag=True, help="Fail on anything outside the known protocol.")
@click.option("--cwd", help="The run's working directory, to resolve relative paths.")
def replay(file: BinaryIO, as_json: bool, strict: bool, cwd: str | None) -> None:
    """Normalize Gemini stream-json output from FILE (or - for stdin).

    \b
    gemwire replay run.jsonl
    gemini -o stream-json -p "fix the tests" | gemwire replay --json -
    """
    transcript = Transcript(sys.stdout)
    ok = False
    try:
        for event in replay_gemini_stream(_chunks(file), strict=strict, cwd=cwd):
            if as_json:
                sys.stdout.buffer.write(encode_event(event))
                sys.stdout.buffer.flush()
            else:
                transcript.write(event)
            if isinstance(event, TurnCompleted):
                ok = event.ok
    except MalformedMessageError as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_PROTOCOL)
    sys.exit(EXIT_OK if ok else EXIT_TURN_FAILED)


def _exit_status(result: RunResult) -> int:
    if result.ok:
        return EXIT_OK
    kind = result.error.kind if result.error else None
    return {"timeout": EXIT_TIMEOUT, "cancelled": EXIT_CANCELLED}.get(kind or "", EXIT_TURN_FAILED)


@main.command()
@click.argument("prompt")
@click.option("-m", "--model", help="Model or alias (auto, pro, flash, flash-lite).")
@click.option(
    "--approval-mode",
    type=click.Choice(["default", "auto_edit", "yolo", "plan"]),
    help="Which tools run without asking; headless, the rest are not offered.",
)
@click.option("-y", "--yolo", is_flag=True, help="Same as --approval-mode yolo.")
@click.option("--cwd", help="The workspace to run in (default: here).")
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
@click.option("--timeout", type=float, help="Seconds for the whole run.")
@click.option("--idle-timeout", type=float, help="Seconds without output before stopping.")
@click.option("--max-tool-calls", type=int, help="Stop after this many tool calls.")
@click.option("--max-rate-limit-retries", type=int, help="Stop after this many 429 retries.")
@click.option("--json", "as_json", is_flag=True, help="Print normalized events as JSON lines.")
def run(
    prompt: str,
    yolo: bool,
    as_json: bool,
    include_directories: tuple[str, ...],
    policy_files: tuple[str, ...],
    allowed_tools: tuple[str, ...],
    extensions: tuple[str, ...],
    **options: object,
) -> None:
    """Run Gemini CLI on PROMPT (- reads it from stdin) and stream what happens.

    \b
    gemwire run "fix the failing test" --approval-mode auto_edit
    gemwire run --json -y "summarize README.md" > events.jsonl
    """
    if prompt == "-":
        prompt = sys.stdin.read()
    if yolo:
        if options["approval_mode"] not in (None, "yolo"):
            raise click.UsageError("--yolo and --approval-mode disagree")
        options["approval_mode"] = "yolo"
    settings = GeminiOptions(
        include_directories=include_directories,
        policy_files=policy_files,
        allowed_tools=allowed_tools,
        extensions=extensions,
        **{k: v for k, v in options.items() if v is not None},  # type: ignore[arg-type]
    )
    transcript = Transcript(sys.stdout)

    def show(event: Event) -> None:
        if as_json:
            sys.stdout.buffer.write(encode_event(event))
            sys.stdout.buffer.flush()
        else:
            transcript.write(event)
            sys.stdout.flush()

    async def go() -> RunResult:
        async with run_gemini(prompt, settings) as handle:
            async for event in handle:
                show(event)
        return handle.result

    try:
        result = anyio.run(go)
    except (AgentNotFound, UnsupportedVersion) as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except PromptTooLarge as exc:
        raise click.UsageError(str(exc)) from exc
    except KeyboardInterrupt:
        sys.exit(EXIT_CANCELLED)
    if not as_json and result.resume:
        click.echo(f"resume: {result.resume.command}")
    sys.exit(_exit_status(result))


from gemwire.cli.acp import acp as _acp

main.add_command(_acp)
