"""``gemwire agent antigravity`` against the harness it drives, in one run, offline.

    .venv/bin/python bench/antigravity.py [--runs 5] [--chunks 2000]

- **Start.** The adapter's own start (spawn to its ``initialize`` answer: gemwire's imports,
  never the SDK's) against the harness's start (the SDK's ``Agent`` entered, in process,
  the SDK already imported), and the SDK's import alone (a fresh ``python -c``). Target: the
  adapter's start at most 1.5 times the harness's.
- **First answer.** A new session's first ``agent_message_chunk`` on a running adapter
  (``session/new`` and the prompt), and from a cold start (spawn, ``initialize``, the same).
- **Events per second.** One answer of ``--chunks`` text chunks: the updates the adapter
  delivers per second against the steps the SDK itself yields per second (in process, no
  adapter). Target: at least 0.8.

Medians of ``--runs`` rounds, the contenders interleaved. The scripted model serves every
request on 127.0.0.1; each run has its own home.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

from gemwire.antigravity.harness import Harness
from gemwire.antigravity.settings import Settings
from gemwire.testing import FAKE_API_KEY, Reply, Scenario, ScriptedModel, Text

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


class Adapter:
    """``gemwire agent antigravity``, spoken to line by line."""

    def __init__(self, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [GEMWIRE, "agent", "antigravity"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.ids = iter(range(1 << 30))

    def call(self, method: str, params: dict[str, Any], until: str | None = None) -> float:
        """Seconds to the answer (or, with ``until``, to the first update of that kind)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        request_id = next(self.ids)
        line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        start = time.perf_counter()
        self.process.stdin.write(json.dumps(line).encode() + b"\n")
        self.process.stdin.flush()
        first = None
        while True:
            message = json.loads(self.process.stdout.readline())
            update = message.get("params", {}).get("update", {})
            if first is None and until and update.get("sessionUpdate") == until:
                first = time.perf_counter() - start
            if message.get("id") == request_id and "method" not in message:
                return first if first is not None else time.perf_counter() - start

    def count(self, session: str, text: str) -> tuple[int, float]:
        """A prompt's ``session/update`` count and the seconds from the first to the last."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
        line = {"jsonrpc": "2.0", "id": next(self.ids), "method": "session/prompt"}
        self.process.stdin.write(json.dumps({**line, "params": prompt}).encode() + b"\n")
        self.process.stdin.flush()
        updates, first, last = 0, 0.0, 0.0
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("method") == "session/update":
                last = time.perf_counter()
                first = first or last
                updates += 1
            elif "result" in message or "error" in message:
                return updates, last - first

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def environ(home: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
    env.update(HOME=str(home), GEMINI_API_KEY=FAKE_API_KEY, GOOGLE_GEMINI_BASE_URL=url)
    return env | {"GEMWIRE_ANTIGRAVITY_NETWORK_TOOLS": "0"}


def new_session(adapter: Adapter, cwd: Path) -> tuple[str, float]:
    assert adapter.process.stdin is not None
    assert adapter.process.stdout is not None
    params = {"cwd": str(cwd), "mcpServers": []}
    line = {"jsonrpc": "2.0", "id": next(adapter.ids), "method": "session/new", "params": params}
    start = time.perf_counter()
    adapter.process.stdin.write(json.dumps(line).encode() + b"\n")
    adapter.process.stdin.flush()
    answer = json.loads(adapter.process.stdout.readline())
    return answer["result"]["sessionId"], time.perf_counter() - start


async def harness_run(home: Path, url: str, chunks: int) -> tuple[float, int, float]:
    """In process: the harness's start, and the steps of one long answer per second."""
    os.environ["HOME"] = str(home)  # the harness's encoder goes under it
    settings = Settings(
        app_data_dir=str(home / ".gemini" / "antigravity"),
        api_key=FAKE_API_KEY,
        base_url=url,
        model="gemini-3.8-flash",
    )

    async def allow(tool: str, args: object) -> bool:
        return True

    start = time.perf_counter()
    harness = Harness(settings, str(home), str(uuid.uuid4()), ask=allow, network_tools=False)
    async with harness:
        started = time.perf_counter() - start
        steps, first, last = 0, 0.0, 0.0
        async for _ in harness.turn(f"long {chunks}"):
            last = time.perf_counter()
            first = first or last
            steps += 1
    return started, steps, last - first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=2000)
    args = parser.parse_args()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import google.antigravity"], check=True)
    sdk_import = time.perf_counter() - start
    long = Reply([Text(f"w{i} ") for i in range(args.chunks)], when="long")
    short = Reply([Text("Hi.")], when="short")
    results: dict[str, list[float]] = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModel(Scenario(turns=[long, short] * (4 * args.runs))) as model,
    ):
        for run in range(args.runs):
            home = Path(tmp) / f"run{run}"
            home.mkdir()
            adapter = Adapter(environ(home, model.url))
            adapter.call("initialize", {"protocolVersion": 1})
            results.setdefault("adapter start (initialize answered)", []).append(
                time.perf_counter() - adapter.started
            )
            session, _ = new_session(adapter, home)
            asked = time.perf_counter()
            first = adapter.call(
                "session/prompt",
                {"sessionId": session, "prompt": [{"type": "text", "text": "short"}]},
                until="agent_message_chunk",
            )
            results.setdefault("cold: spawn to first answer", []).append(
                asked - adapter.started + first
            )
            again, opened = new_session(adapter, home)
            chunk = adapter.call(
                "session/prompt",
                {"sessionId": again, "prompt": [{"type": "text", "text": "short"}]},
                until="agent_message_chunk",
            )
            results.setdefault("running adapter: new session to first answer", []).append(
                opened + chunk
            )
            updates, seconds = adapter.count(again, f"long {args.chunks}")
            results.setdefault("adapter updates/s", []).append(updates / seconds)
            adapter.close()
            harness_start, steps, harness_seconds = anyio.run(
                harness_run, home, model.url, args.chunks, backend="asyncio"
            )
            results.setdefault("harness start (Agent entered)", []).append(harness_start)
            results.setdefault("harness steps/s (SDK, in process)", []).append(
                steps / harness_seconds
            )
    median = {name: statistics.median(values) for name, values in results.items()}
    print(f"SDK import (fresh python -c): {sdk_import * 1000:.0f} ms")
    for name, value in median.items():
        unit = "" if "/s" in name else " ms"
        shown = value if "/s" in name else value * 1000
        print(f"{name}: {shown:.0f}{unit}  (runs: {', '.join(f'{v:.3g}' for v in results[name])})")
    start_ratio = (
        median["adapter start (initialize answered)"] / median["harness start (Agent entered)"]
    )
    rate_ratio = median["adapter updates/s"] / median["harness steps/s (SDK, in process)"]
    print(f"adapter start / harness start: {start_ratio:.2f} (target <= 1.5)")
    print(f"adapter updates/s / harness steps/s: {rate_ratio:.2f} (target >= 0.8)")


if __name__ == "__main__":
    main()
