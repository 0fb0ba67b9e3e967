"""The ``gemwire`` command line (``pip install 'gemwire[cli]'``); the only layer importing click."""

from __future__ import annotations

import click

from gemwire._version import __version__

__all__ = ("main",)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gemwire")
def main() -> None:
    """Run Gemini CLI and ACP agents headlessly; one normalized event stream."""
