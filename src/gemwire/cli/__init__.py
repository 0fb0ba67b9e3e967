"""The ``gemwire`` command line (``pip install 'gemwire[cli]'``); the only layer importing click.

Exit status: 0 the turn succeeded; 1 the turn failed; 2 usage error; 3 the input is not
the protocol (``--strict``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import BinaryIO

import click

from gemwire import MalformedMessageError, __version__, replay_gemini_stream
from gemwire.cli.transcript import Transcript
from gemwire.events import TurnCompleted, encode_event

__all__ = ("main",)

EXIT_OK, EXIT_TURN_FAILED, EXIT_PROTOCOL = 0, 1, 3


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
