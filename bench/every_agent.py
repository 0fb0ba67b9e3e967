"""`gemwire usage --agent all` and `gemwire sessions search` on a big home of four agents.

    .venv/bin/python bench/every_agent.py [--sessions 10000] [--repeat 3]

The home holds ``--sessions`` sessions of each of Gemini CLI, Claude Code, Codex and Qwen
Code: Gemini's made by tests/unit/sessions/usage_home.py (as bench/usage.py makes them), the
others' by copying their agent's recordings (tests/fixtures/<agent>) again and again under
new session ids, across the same three projects. Timed warm (after one run that writes the
listing and search indexes), best of ``--repeat``: reading every file's bytes (the floor),
`usage(agent="all")`, the first result of `search` for a text most sessions hold
(``made.txt``), and whole searches for a text two sessions hold and for one none holds.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _helper(name: str, path: Path) -> Any:
    # The helpers import the recorded corpus as pytest does, from tests/.
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_home(home: Path, sessions: int) -> list[Path]:
    """Every agent's ``sessions`` sessions in ``home``; one of Claude Code's and one of Qwen
    Code's hold the word ``needle-1234`` (in their prompt)."""
    usage_home = _helper("usage_home", TESTS / "unit" / "sessions" / "usage_home.py")
    import jsonl_agents as jsonl  # on the path _helper put tests/ on

    usage_home.make_home(home, sessions)
    made = []
    for spec in jsonl.JSONL_AGENTS:
        recordings = [
            (spec.recordings / f"{case}.jsonl").read_text()
            for case in jsonl.cases_of(spec.recordings)
        ]
        for n in range(sessions):
            text = recordings[n % len(recordings)]
            workspace = usage_home.PROJECTS[n % len(usage_home.PROJECTS)]
            old = spec.session_id(text)
            new = str(uuid.UUID(int=(n + 1) << 64 | hash(spec.agent) & 0xFFFF))
            text = text.replace("__WORKSPACE__", workspace).replace(old, new)
            if n == sessions // 2:
                text = text.replace('"go"', '"go needle-1234"', 1)
            folder = spec.folder(home, Path(workspace))
            folder.mkdir(parents=True, exist_ok=True)
            made.append(folder / spec.file_name(new))
            made[-1].write_text(text)
    return made


def every_file(home: Path) -> list[Path]:
    return [Path(root) / name for root, _, names in os.walk(home) for name in names]


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as tmp:
        home = Path(tmp) / "home"
        os.environ |= {
            "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "QWEN_HOME": str(home / ".qwen"),
            "QWEN_RUNTIME_DIR": "",
            "XDG_DATA_HOME": str(home / ".local" / "share"),  # no OpenCode database
        }
        os.environ.pop("OPENCODE_DB", None)
        make_home(home, args.sessions)
        from gemwire.sessions import search, sources, usage

        def homes() -> list[Any]:
            return sources("all", home)

        def read_all() -> int:
            return sum(len(p.read_bytes()) for p in every_file(home))

        def usage_all() -> int:
            return usage(homes(), by="day").total.requests

        def first_hit() -> int:
            return len(list(itertools.islice(search("made.txt", homes()), 1)))

        def one_hit() -> int:
            return len(list(search("needle-1234", homes())))

        def no_hit() -> int:
            return len(list(search("no session holds this", homes())))

        cold_usage, _ = timed(usage_all)
        cold_search, _ = timed(no_hit)  # reads every file, writes the search indexes
        contenders = (read_all, usage_all, first_hit, one_hit, no_hit)
        rounds = [[timed(fn) for fn in contenders] for _ in range(args.repeat)]
        best = [min(column, key=lambda r: r[0]) for column in zip(*rounds, strict=True)]
        (read_s, size), (usage_s, requests), (first_s, _), (one_s, ones), (none_s, _) = best
        files = len(every_file(home))
        print(
            f"4 agents x {args.sessions} sessions ({files} files, {int(size) / 1e6:.1f} MB), "
            f"warm, best of {args.repeat}:"
        )
        print(f"  read every file's bytes            {read_s:7.3f} s")
        print(f"  usage(agent='all')                 {usage_s:7.3f} s  ({requests:,} requests)")
        print(f"  search: first result (made.txt)    {first_s:7.3f} s")
        print(f"  search: all of 'needle-1234'       {one_s:7.3f} s  ({ones} sessions)")
        print(f"  search: a text no session holds    {none_s:7.3f} s")
        print(f"  cold (no index): usage {cold_usage:.3f} s, search {cold_search:.3f} s")


if __name__ == "__main__":
    main()
