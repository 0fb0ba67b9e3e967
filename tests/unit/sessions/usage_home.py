"""A big generated Gemini home: the recorded sessions copied under new ids, dates, projects.

Used by test_usage.py (the totals against a plain sum) and bench/usage.py (the speed).
Each copy is one recording's whole ``chats`` folder (every format and CLI version in
tests/fixtures/gemini, subagent folders included), with every session id in it replaced by
a new one and every timestamp moved to the copy's day.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import date, timedelta
from functools import partial
from pathlib import Path

from kit.corpus import RECORDINGS

PROJECTS = ("/work/alpha", "/work/beta", "/work/gamma")
FIRST_DAY = date(2026, 9, 1)
DAYS = 90
_DATE = re.compile(r'"\d{4}-\d\d-\d\dT')
_SESSION_ID = re.compile(r'"sessionId":\s*"([^"]+)"')


class Unit:
    """One recording's chats folder: its files (relative paths) and their bytes."""

    def __init__(self, chats: Path) -> None:
        self.chats = chats
        self.files = {
            p.relative_to(chats): p.read_text(encoding="utf-8")
            for p in sorted(chats.rglob("*.json*"))
        }
        self.ids = sorted(
            {m.group(1) for data in self.files.values() for m in _SESSION_ID.finditer(data)}
        )

    @property
    def mains(self) -> int:
        return sum(1 for path in self.files if len(path.parts) == 1)


def _renamed(renames: dict[str, str], match: re.Match[str]) -> str:
    return renames[match.group()]


def units() -> list[Unit]:
    found = [Unit(chats) for chats in sorted(RECORDINGS.glob("*/*/*/gemini-home/tmp/*/chats"))]
    return [unit for unit in found if unit.files]


def day_of(n: int) -> date:
    return FIRST_DAY + timedelta(days=n % DAYS)


def project_of(n: int) -> str:
    return PROJECTS[n % len(PROJECTS)]


def make_home(home: Path, sessions: int) -> list[tuple[int, Unit]]:
    """Copy units into ``home`` until it holds ``sessions`` main session files.

    Returns (copy number, unit) for every copy: copy ``n`` is dated `day_of(n)` and
    belongs to `project_of(n)`.
    """
    gemini = home / ".gemini"
    slugs = {root: root.rsplit("/", 1)[-1] for root in PROJECTS}
    for root, slug in slugs.items():
        (gemini / "tmp" / slug / "chats").mkdir(parents=True)
        (gemini / "tmp" / slug / ".project_root").write_text(root)
    (gemini / "projects.json").write_text(json.dumps({"projects": slugs}))
    sources = units()
    copies: list[tuple[int, Unit]] = []
    made = n = 0
    while made < sessions:
        unit = sources[n % len(sources)]
        chats = gemini / "tmp" / slugs[project_of(n)] / "chats"
        day = f'"{day_of(n).isoformat()}T'
        # Distinct first 8 characters: file names carry them (the short id).
        renames = {
            old: str(uuid.UUID(int=(n * 16 + k + 1) << 96)) for k, old in enumerate(unit.ids)
        }
        ids = re.compile("|".join(map(re.escape, renames))) if renames else None
        for relative, data in unit.files.items():
            name = str(relative)
            if ids is not None:
                data = ids.sub(partial(_renamed, renames), data)
                name = ids.sub(partial(_renamed, renames), name)
                for old, new in renames.items():
                    name = name.replace(f"-{old[:8]}.", f"-{new[:8]}.")
            target = chats / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_DATE.sub(day, data), encoding="utf-8")
        copies.append((n, unit))
        made += unit.mains
        n += 1
    return copies
