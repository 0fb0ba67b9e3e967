"""``gemwire replay --json FILE > /dev/null`` as a process, against a bare typed-decode process.

    .venv/bin/python bench/replay_process.py [--lines 200000] [--runs 7]

The file is the small-event corpus of bench/decode_normalize.py (one long run of recorded
Gemini CLI 0.61.0 events). The baseline is the least any Python consumer of that file
does: start Python, import msgspec and gemwire's stream-json types (loaded by path, without
the rest of gemwire), read the file, split its lines and decode each one typed. Both write
to /dev/null; each process's CPU time (user + system, from ``wait4``) counts, best of
``--runs`` interleaved rounds, so that other load on the shared machine counts less. Wall
times are shown too. Target: gemwire at 0.4x the baseline or better.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
WIRE = Path(__file__).resolve().parents[1] / "src" / "gemwire" / "wire" / "gemini_stream.py"
TARGET = 0.4
CORPUS = Path(__file__).with_name("decode_normalize.py")
BARE = f"""
import importlib.util, sys
import msgspec
spec = importlib.util.spec_from_file_location("gemini_stream", {str(WIRE)!r})
wire = importlib.util.module_from_spec(spec)
sys.modules["gemini_stream"] = wire
spec.loader.exec_module(wire)
decode = msgspec.json.Decoder(wire.JsonStreamEvent).decode
with open(sys.argv[1], "rb") as file:
    for line in file.read().splitlines():
        if line:
            decode(line)
"""


def small_event_corpus(lines: int) -> bytes:
    # Shared with bench/decode_normalize.py; loaded by path (bench/ is not a package).
    spec = importlib.util.spec_from_file_location("decode_normalize", CORPUS)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus: bytes = module.small_event_corpus(lines)
    return corpus


def run(argv: list[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one process, stdout to /dev/null."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{argv} exited with {code}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as folder:
        path = Path(folder) / "run.jsonl"
        path.write_bytes(small_event_corpus(args.lines))
        contenders = {
            "bare typed decode (python + msgspec)": [sys.executable, "-c", BARE, str(path)],
            "gemwire replay --json FILE": [GEMWIRE, "replay", "--json", str(path)],
        }
        cpu = dict.fromkeys(contenders, float("inf"))
        wall = dict.fromkeys(contenders, float("inf"))
        for _ in range(args.runs):
            for name, argv in contenders.items():
                seconds, elapsed = run(argv)
                cpu[name], wall[name] = min(cpu[name], seconds), min(wall[name], elapsed)
        size = path.stat().st_size
    print(f"input: {size / 1e6:.1f} MB, {args.lines:,} lines; best of {args.runs} rounds")
    print(f"{'process':38} {'CPU s':>7} {'wall s':>7} {'lines/s (CPU)':>14} {'vs bare':>8}")
    bare = cpu[next(iter(contenders))]
    for name in contenders:
        print(
            f"{name:38} {cpu[name]:7.3f} {wall[name]:7.3f} {args.lines / cpu[name]:14,.0f} "
            f"{bare / cpu[name]:7.2f}x"
        )
    ratio = bare / cpu["gemwire replay --json FILE"]
    verdict = "met" if ratio >= TARGET else "MISSED"
    print(f"replay --json: {ratio:.2f}x the bare process, target >= {TARGET}x: {verdict}")


if __name__ == "__main__":
    main()
