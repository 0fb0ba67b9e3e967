"""``gemwire replay``: captured Gemini stream-json output, normalized and shown."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from typing import BinaryIO

import click

from gemwire.cli.exit_codes import EXIT_PROTOCOL, exit_status
from gemwire.cli.options import output_options
from gemwire.cli.safe_text import terminal_safe

__all__ = ("replay",)


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    # read1 returns what is there now, so `gemini ... | gemwire replay -` is live.
    read = getattr(stream, "read1", stream.read)
    while chunk := read(1 << 16):
        yield chunk


def _is_live(stream: BinaryIO) -> bool:
    """A pipe or a terminal (events happening now), not a file read after the fact."""
    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


@click.command()
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--strict", is_flag=True, help="Fail on anything outside the known protocol.")
@click.option("--cwd", help="The run's working directory, to resolve relative paths.")
@output_options
def replay(
    file: BinaryIO, as_json: bool, quiet: bool, verbose: bool, strict: bool, cwd: str | None
) -> None:
    """Normalize Gemini stream-json output from FILE (or - for stdin) and show it.

    \b
    gemwire replay run.jsonl
    gemini -o stream-json -p "fix the tests" | gemwire replay --json -
    """
    from gemwire._normalize.gemini_replay import replay_gemini_batches
    from gemwire._normalize.masking import Masker, known_secrets
    from gemwire.cli.live import open_output
    from gemwire.errors import MalformedMessageError
    from gemwire.events import Event, TurnCompleted

    output = open_output(
        as_json=as_json, quiet=quiet, verbose=verbose, cwd=cwd, timed=_is_live(file)
    )
    # `gemini -o stream-json … | gemwire replay -` runs with the agent's keys around.
    masker = Masker(known_secrets(os.environ))
    last: Event | None = None
    try:
        with output:
            for events in replay_gemini_batches(_chunks(file), strict=strict, cwd=cwd):
                output.show_all(masker.events(events) if masker else events)
                last = events[-1]
            output.close()
    except MalformedMessageError as exc:
        click.echo(f"gemwire: {terminal_safe(str(exc))}", err=True)
        sys.exit(EXIT_PROTOCOL)
    assert isinstance(last, TurnCompleted), last  # exactly one comes, last, whatever the input
    sys.exit(exit_status(last))
