"""Runs starting together on one Gemini home start one after another until one got through.

The fake CLI here does what Gemini CLI 0.61.0 does at start with a 0.15-era key in its
settings: it rewrites ``settings.json`` in place (truncate, then write; the pause widens
upstream's window), and a CLI that reads the file meanwhile finds it empty and exits 52.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from kit.waiting import eventually

from gemwire import GeminiOptions, RunResult, run_gemini_sync
from gemwire.runners import _first_start

MIGRATING_CLI = """
import json, os, sys, time
path = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini", "settings.json")
text = open(path).read()
if not text:
    sys.exit("Error in settings.json: Unexpected end of JSON input")  # Gemini exits 52
settings = json.loads(text)
general = settings["general"]
if "disableAutoUpdate" in general:
    general["enableAutoUpdate"] = not general.pop("disableAutoUpdate")
    with open(path, "w") as out:
        time.sleep(1.0)
        out.write(json.dumps(settings))
sys.stdin.read()
print('{"type":"init","timestamp":"t","session_id":"s%d","model":"auto"}' % os.getpid())
print('{"type":"result","timestamp":"t","status":"success"}')
"""

RUNS = 4


def home_with_a_015_key(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    settings = {"general": {"disableAutoUpdate": True}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home


def test_concurrent_first_starts_on_one_home_all_get_through(tmp_path: Path) -> None:
    home = home_with_a_015_key(tmp_path)
    (tmp_path / "cli.py").write_text(MIGRATING_CLI)
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{tmp_path / "cli.py"}" "$@"\n')
    launcher.chmod(0o755)
    options = GeminiOptions(executable=str(launcher), cwd=str(tmp_path), gemini_home=str(home))
    results: list[RunResult] = []

    async def one() -> None:
        results.append(await anyio.to_thread.run_sync(run_gemini_sync, "hi", options))

    async def all_at_once() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(RUNS):
                tg.start_soon(one)

    anyio.run(all_at_once)
    assert [(r.ok, r.exit_code) for r in results] == [(True, 0)] * RUNS
    assert json.loads((home / ".gemini" / "settings.json").read_text()) == {
        "general": {"enableAutoUpdate": False}
    }
    assert str(home) in _first_start._started


SILENT_WHEN_ASKED_CLI = """
import os, sys, time
prompt = sys.stdin.read()
if prompt == "silent":
    open(os.path.join(os.path.dirname(__file__), "silent-started"), "w").close()
    # Prints nothing (as -o json does until the end) until the other run has ended, or for
    # a minute if that run waits for this one.
    released = os.path.join(os.path.dirname(__file__), "second-ended")
    deadline = time.monotonic() + 60
    while not os.path.exists(released) and time.monotonic() < deadline:
        time.sleep(0.05)
print('{"type":"init","timestamp":"t","session_id":"%s","model":"auto"}' % prompt)
print('{"type":"result","timestamp":"t","status":"success"}')
"""


def test_a_start_that_prints_nothing_holds_the_others_up_only_boundedly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_first_start, "FIRST_START_BOUND", 1.0)
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (tmp_path / "cli.py").write_text(SILENT_WHEN_ASKED_CLI)
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{tmp_path / "cli.py"}" "$@"\n')
    launcher.chmod(0o755)
    options = GeminiOptions(executable=str(launcher), cwd=str(tmp_path), gemini_home=str(home))
    finished: list[str | None] = []

    async def one(prompt: str) -> None:
        result = await anyio.to_thread.run_sync(run_gemini_sync, prompt, options)
        finished.append(result.session_id)
        if prompt == "second":
            (tmp_path / "second-ended").touch()

    async def one_then_another() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "silent")
            # Started by gemwire once it took the first-start lock.
            await eventually(lambda: (tmp_path / "silent-started").exists())
            tg.start_soon(one, "second")

    anyio.run(one_then_another)
    assert finished == ["second", "silent"]
