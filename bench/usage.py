"""`gemwire usage` on a big home: 10,000 recorded sessions, against reading their bytes.

    .venv/bin/python bench/usage.py [--sessions 10000] [--repeat 3]

The home is made by tests/unit/sessions/usage_home.py: every recording's ``chats`` folder
(all formats and CLI versions, subagents included) copied again and again under new session
ids, days and three projects, until it holds ``--sessions`` main session files. Timed, best
of ``--repeat`` interleaved rounds: reading every file's bytes (the floor), `usage` by day
(what `gemwire usage` does), and `load_session` of every file summing the tokens of its
messages (the obvious way, with the whole messages built).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gemwire.sessions import Conversation, load_session, usage
from gemwire.wire.gemini_session import MessageRecord

TESTS = Path(__file__).resolve().parents[1] / "tests"
HELPER = TESTS / "unit" / "sessions" / "usage_home.py"


def _helper() -> Any:
    # The helper imports the recorded corpus as pytest does, from tests/.
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location("usage_home", HELPER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def files(home: Path) -> list[Path]:
    return sorted(
        p for p in (home / ".gemini" / "tmp").rglob("*.json*") if p.name != "projects.json"
    )


def read_all(home: Path) -> int:
    return sum(len(p.read_bytes()) for p in files(home))


def by_day(home: Path) -> int:
    return usage(home, by="day").total.total_tokens


def load_every_file(home: Path) -> int:
    total = 0
    for path in files(home):
        conversation = load_session(path)
        assert isinstance(conversation, Conversation)  # every file here is Gemini's
        for message in conversation.messages:
            if isinstance(message, MessageRecord) and message.tokens:
                total += message.tokens.total
    return total


def timed(fn: Callable[[Path], int], home: Path) -> tuple[float, int]:
    started = time.perf_counter()
    result = fn(home)
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
        _helper().make_home(home, args.sessions)
        contenders = (read_all, by_day, load_every_file)
        rounds = [[timed(fn, home) for fn in contenders] for _ in range(args.repeat)]
        (read_s, size), (usage_s, tokens), (load_s, _) = (
            min(column) for column in zip(*rounds, strict=True)
        )
        count = len(files(home))
        print(f"usage of {args.sessions} sessions ({count} files, {size / 1e6:.1f} MB):")
        print(f"  read every file's bytes       {read_s:7.3f} s")
        print(
            f"  usage(by='day')               {usage_s:7.3f} s  ({usage_s / read_s:.1f}x the read)"
        )
        print(f"  load_session every file + sum {load_s:7.3f} s  ({load_s / read_s:.1f}x the read)")
        print(f"  {tokens:,} tokens counted")


if __name__ == "__main__":
    main()
