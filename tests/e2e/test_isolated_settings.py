"""What each pinned Gemini CLI does to an isolated home's settings at start: nothing.

A CLI that finds keys its version renamed rewrites ``settings.json`` in place at start, and
another CLI starting on the same home at that moment reads an empty file (exit 52).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from gemwire import RunResult, run_gemini_sync
from gemwire.testing import (
    PINNED_VERSIONS,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
)

pytestmark = pytest.mark.e2e


def run_on(env: IsolatedGemini) -> RunResult:
    return run_gemini_sync("hi", env.gemini_options())


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_the_cli_finds_nothing_to_rewrite(version: str, tmp_path: Path) -> None:
    with ScriptedModel(Scenario(turns=[Reply([Text("Done.")])])) as model:
        env = IsolatedGemini(model.url, root=tmp_path, version=version)
        written = env.settings_path.read_text()
        assert run_on(env).ok
        assert env.settings_path.read_text() == written


def test_concurrent_first_runs_on_a_home_with_015_keys(tmp_path: Path) -> None:
    runs = 4
    old_keys = {"general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
    with ScriptedModel(Scenario(turns=[Reply([Text("Done.")], repeat=runs)])) as model:
        env = IsolatedGemini(model.url, root=tmp_path, settings=old_keys)
        results: list[RunResult] = []

        async def one() -> None:
            results.append(await anyio.to_thread.run_sync(run_on, env))

        async def all_at_once() -> None:
            async with anyio.create_task_group() as tg:
                for _ in range(runs):
                    tg.start_soon(one)

        anyio.run(all_at_once)
    assert [(r.ok, r.exit_code) for r in results] == [(True, 0)] * runs
    general = json.loads(env.settings_path.read_text())["general"]
    assert (general["enableAutoUpdate"], general["enableAutoUpdateNotification"]) == (False, False)
    assert "disableAutoUpdate" not in general
