"""Recorded Gemini homes, copied with their placeholders replaced by real paths.

`Materialized`; the ``materialize`` fixture that makes them is in tests/conftest.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


class Materialized:
    """A recording's ``gemini-home`` as a real home, and its stdout, under one root."""

    def __init__(self, recording: Path, root: Path) -> None:
        self.root = root.resolve()
        self.home = self.root / "home"
        self.workspace = self.root / "workspace"
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.replacements = [
            ("__PROJECT_HASH__", hashlib.sha256(str(self.workspace).encode()).hexdigest()),
            ("__WORKSPACE__", str(self.workspace)),
            ("__HOME__", str(self.home)),
            ("__ROOT__", str(self.root)),
        ]
        source = recording / "gemini-home"
        for path in sorted(source.rglob("*")):
            if path.is_file():
                target = self.home / ".gemini" / self.text(str(path.relative_to(source)))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(self.data(path.read_bytes()))
        self.stdouts = [self.data(p.read_bytes()) for p in sorted(recording.glob("run-*.stdout"))]

    def text(self, text: str) -> str:
        for old, new in self.replacements:
            text = text.replace(old, new)
        return text

    def data(self, data: bytes) -> bytes:
        return self.text(data.decode()).encode()

    @property
    def chats(self) -> Path:
        return next((self.home / ".gemini" / "tmp").glob("*/chats"))

    def session_files(self) -> list[Path]:
        return sorted(p for p in self.chats.glob("session-*") if p.is_file())
