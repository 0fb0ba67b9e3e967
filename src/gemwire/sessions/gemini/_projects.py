"""`Project`: one project folder under a Gemini home's ``.gemini/tmp``."""

from __future__ import annotations

import os
from typing import Literal

import msgspec

__all__ = ("Project",)


class Project(msgspec.Struct, frozen=True, kw_only=True):
    """A project folder under ``.gemini/tmp``; ``root`` is its project when known."""

    id: str
    """The folder's name: a slug or a sha256 hex."""
    path: str
    root: str | None
    layout: Literal["slug", "hash"]

    @property
    def chats_dir(self) -> str:
        return os.path.join(self.path, "chats")
