"""Saved sessions: listing a project with many sessions, and loading one huge session.

    .venv/bin/python bench/sessions.py [--sessions 10000] [--mb 100] [--repeat 3]

Listing: ``--sessions`` session files in one project folder, made from the sessions Gemini
CLI 0.61.0 recorded in tests/fixtures/gemini (each copy gets its own session id and file
name), listed the way ``gemini --resume`` lists them (`GeminiHome.sessions`): cold (the first
listing, which reads every file and writes the listing index) and warm (best of
``--repeat``, the index up to date). Baseline in the same run: reading every file's bytes and
nothing else. The index goes to a cache folder inside the benchmark's temporary folder.

Loading: one ``.jsonl`` of about ``--mb`` MB, made by appending the recorded messages of the
0.61.0 ``session_resume_edits`` run again and again under new ids, loaded (`load_session`) and
mapped to events. Baseline in the same run: bare msgspec decoding of every line into dicts.
Best of ``--repeat`` rounds, each timing the baseline and both contenders in turn. Then the
memory: what a loaded session holds (Python allocations alive after `load_session`, by
tracemalloc, and the resident set growth, Linux only), and the tracemalloc peak while loading
it and mapping it to events.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from gemwire.sessions import Conversation, GeminiHome, load_session

RECORDINGS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gemini" / "0.61.0"
ROOT = "/bench/project"


def recorded_sessions() -> list[bytes]:
    return [
        p.read_bytes()
        for p in sorted(RECORDINGS.glob("*/stream-json/gemini-home/tmp/*/chats/session-*.jsonl"))
    ]


def make_home(folder: Path, count: int) -> None:
    gemini = folder / ".gemini"
    chats = gemini / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)
    (gemini / "projects.json").write_text(json.dumps({"projects": {ROOT: "project"}}))
    (gemini / "tmp" / "project" / ".project_root").write_text(ROOT)
    sources = recorded_sessions()
    for n in range(count):
        data = sources[n % len(sources)]
        old = json.loads(data.split(b"\n", 1)[0])["sessionId"]
        new = str(uuid.UUID(int=n + 1))
        minute = f"2026-01-{1 + n // 1440 % 28:02d}T{n // 60 % 24:02d}-{n % 60:02d}"
        (chats / f"session-{minute}-{new[:8]}.jsonl").write_bytes(
            data.replace(old.encode(), new.encode())
        )


def make_big_session(path: Path, megabytes: float) -> int:
    [source] = RECORDINGS.glob(
        "session_resume_edits/stream-json/gemini-home/tmp/*/chats/session-*.jsonl"
    )
    lines = source.read_bytes().splitlines()
    messages = [json.loads(line) for line in lines if line.startswith(b'{"id":')]
    target = int(megabytes * 1e6)
    size = 0
    with path.open("wb") as out:
        out.write(lines[0] + b"\n")
        n = 0
        while size < target:
            for message in messages:
                record = {**message, "id": f"{message['id']}-{n}"}
                line = json.dumps(record).encode() + b"\n"
                out.write(line)
                size += len(line)
            n += 1
    return path.stat().st_size


def read_all(chats: Path) -> int:
    return sum(len(p.read_bytes()) for p in chats.iterdir())


def list_sessions(home: Path) -> int:
    return len(GeminiHome(home).sessions(ROOT))


def bare_decode(path: Path) -> int:
    decode = msgspec.json.Decoder().decode
    return sum(1 for line in path.read_bytes().splitlines() if line and decode(line))


def load_only(path: Path) -> int:
    conversation = load_session(path)
    assert isinstance(conversation, Conversation)  # Gemini's, by its name
    return len(conversation.messages)


def load_and_map(path: Path) -> int:
    return sum(1 for _ in load_session(path).events())


def resident_mb() -> float | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def held_mb(path: Path) -> float | None:
    before = resident_mb()
    conversation = load_session(path)
    after = resident_mb()
    del conversation
    return None if before is None or after is None else after - before


def traced_mb(path: Path) -> tuple[float, float]:
    """(allocations alive after `load_session`, peak while loading and mapping), in MB."""
    tracemalloc.start()
    try:
        conversation = load_session(path)
        held, _ = tracemalloc.get_traced_memory()
        for _ in conversation.events():
            pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return held / 1e6, peak / 1e6


def best(fn: Callable[[Any], int], arg: Any, repeat: int) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn(arg)
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # the listing index
        home = Path(tmp) / "home"
        make_home(home, args.sessions)
        chats = home / ".gemini" / "tmp" / "project" / "chats"
        read_s, size = best(read_all, chats, args.repeat)
        cold_s, _ = best(list_sessions, home, 1)
        list_s, listed = best(list_sessions, home, args.repeat)
        print(f"listing {args.sessions} sessions ({size / 1e6:.1f} MB), {listed} listed:")
        print(f"  read every file's bytes   {read_s:7.3f} s")
        print(f"  GeminiHome.sessions cold  {cold_s:7.3f} s  ({cold_s / read_s:.1f}x the read)")
        print(f"  GeminiHome.sessions warm  {list_s:7.3f} s  ({list_s / read_s:.1f}x the read)")

        big = Path(tmp) / "big.jsonl"
        size = make_big_session(big, args.mb)
        rounds = [
            [best(fn, big, 1) for fn in (bare_decode, load_only, load_and_map)]
            for _ in range(args.repeat)
        ]
        (bare_s, lines), (only_s, _), (load_s, events) = (
            min(column) for column in zip(*rounds, strict=True)
        )
        held = held_mb(big)
        traced, peak = traced_mb(big)
        mb = size / 1e6
        print(f"loading one {mb:.1f} MB session ({lines} lines, {events} events):")
        print(f"  msgspec decode to dicts   {bare_s:7.3f} s  {mb / bare_s:7.1f} MB/s")
        print(
            f"  load_session              {only_s:7.3f} s  {mb / only_s:7.1f} MB/s"
            f"  ({bare_s / only_s:.2f}x the bare decode)"
        )
        print(
            f"  load_session + events     {load_s:7.3f} s  {mb / load_s:7.1f} MB/s"
            f"  ({bare_s / load_s:.2f}x the bare decode)"
        )
        print(
            f"  a loaded session holds    {traced:7.1f} MB  ({traced / mb:.2f}x the file, traced)"
        )
        if held is not None:
            print(f"  resident set growth       {held:7.1f} MB  ({held / mb:.2f}x the file)")
        print(f"  peak, load + events       {peak:7.1f} MB  ({peak / mb:.2f}x the file, traced)")


if __name__ == "__main__":
    main()
