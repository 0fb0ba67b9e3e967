"""``gemwire doctor``."""

from __future__ import annotations

import click

__all__ = ("doctor",)


@click.command()
def doctor() -> None:
    """Check what will bite a headless run here."""
