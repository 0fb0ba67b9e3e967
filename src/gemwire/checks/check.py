"""One finding of the checks: what was checked, how it stands, and how to fix it."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ("Check", "CheckStatus")

CheckStatus = Literal["ok", "warn", "fail"]
"""``fail``: runs here will fail; ``warn``: they may, or lose something; ``ok``: fine."""


class Check(msgspec.Struct, frozen=True, kw_only=True):
    """One finding: what was checked, how it stands, the details, and how to fix it.

    Never holds a secret: only the names of the variables and files one is in.
    """

    name: str
    """What was checked: ``"auth"``, ``"folder trust"``, ``"agent claude"``..."""
    status: CheckStatus
    summary: str
    """One line: what was found."""
    details: tuple[str, ...] = ()
    """More lines: where each thing was found, the versions gemwire tests..."""
    fix: str | None = None
    """What to do about a ``warn`` or ``fail``."""
