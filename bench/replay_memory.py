"""Peak memory of ``gemwire replay --json`` fed one 100 MB line: bounded by the line cap.

    .venv/bin/python bench/replay_memory.py [--size-mb 100] [--runs 3]

The whole process is measured (its peak resident set, from ``wait4``), not a traced part of
it: Python, msgspec, click and every buffer count. The line is a stream-json message between
an ``init`` and a ``result``, read from a file and from a pipe (64 KiB reads either way); it
is over the 64 MiB cap, so gemwire holds at most the cap, skips the line with a ``notice`` and
goes on. The baseline is the same command on the same stream without the long line, in the
same run. Bound: the baseline plus the cap plus 16 MiB of slack.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
MiB = 1 << 20
CAP = 64 * MiB
INIT = b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}\n'
HEAD = b'{"type":"message","timestamp":"t","role":"assistant","content":"'
TAIL = b'","delta":true}\n'
RESULT = b'{"type":"result","timestamp":"t","status":"success"}\n'


def write_stream(path: Path, size: int) -> None:
    with path.open("wb") as file:
        file.write(INIT + HEAD)
        block = b"a" * MiB
        for _ in range(size // MiB):
            file.write(block)
        file.write(TAIL + RESULT)


def peak_rss(argv: list[str], stdin: Path | None) -> tuple[int, bytes]:
    """The process's peak resident set in bytes, and the last line it printed."""
    with tempfile.TemporaryFile() as out:
        source = stdin.open("rb") if stdin else subprocess.DEVNULL
        try:
            process = subprocess.Popen(argv, stdin=source, stdout=out)
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
        finally:
            if stdin:
                source.close()  # type: ignore[union-attr]
        if process.returncode != 0:
            raise SystemExit(f"{argv} exited with {process.returncode}")
        out.seek(0)
        last = out.read().splitlines()[-1]
    return usage.ru_maxrss * 1024, last  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as folder:
        long, short = Path(folder) / "long.jsonl", Path(folder) / "short.jsonl"
        write_stream(long, args.size_mb * MiB)
        short.write_bytes(INIT + RESULT)
        contenders = {
            "baseline: replay --json, no long line": (
                [GEMWIRE, "replay", "--json", str(short)],
                None,
            ),
            "replay --json FILE": ([GEMWIRE, "replay", "--json", str(long)], None),
            "replay --json - (a pipe)": ([GEMWIRE, "replay", "--json", "-"], long),
        }
        peaks: dict[str, int] = dict.fromkeys(contenders, 0)
        for _ in range(args.runs):
            for name, (argv, stdin) in contenders.items():
                peak, last = peak_rss(argv, stdin)
                assert b'"turn_completed"' in last, last
                peaks[name] = max(peaks[name], peak)
    baseline = peaks["baseline: replay --json, no long line"]
    bound = baseline + CAP + 16 * MiB
    print(f"{args.size_mb} MB line, cap {CAP // MiB} MiB; largest peak RSS of {args.runs} runs")
    print(f"{'command':<40} {'peak RSS':>10} {'beyond baseline':>16}")
    for name, peak in peaks.items():
        print(f"{name:<40} {peak / MiB:>6.1f} MiB {(peak - baseline) / MiB:>12.1f} MiB")
    worst = max(peaks.values())
    verdict = "met" if worst <= bound else "MISSED"
    print(f"bound baseline + cap + 16 MiB = {bound / MiB:.1f} MiB: {verdict}")


if __name__ == "__main__":
    main()
