"""A failed run says why in upstream's words (issue 11 items 5 and 6), with the real CLIs.

What Gemini CLI prints on stderr when it exits without a result becomes the error's
message in every output; a run that ends while the CLI retries HTTP 429 is `rate_limited`
(or `quota`), with the retry delay Google asked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire import run_gemini_sync
from gemwire.cli import main
from gemwire.events import TurnError
from gemwire.testing import (
    Fail,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)

pytestmark = pytest.mark.e2e

NO_KEY = (
    "When using Gemini API, you must specify the GEMINI_API_KEY environment variable.\n"
    "Update your environment and try again (no reload needed if using .env)!"
)
NO_AUTH = (
    "Please set an Auth method in your {home}/.gemini/settings.json or specify one of the "
    "following environment variables before running: GEMINI_API_KEY, "
    "GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA"
)
RESUME_HINT = (
    "Use --list-sessions to see available sessions, then use --resume {number}, "
    "--resume {uuid}, or --resume latest."
)
HELLO = Scenario(turns=[Reply([Text("hi")], repeat=3)])


@pytest.mark.parametrize("version", ["0.61.0", "0.30.0"])
def test_no_key_is_explained_in_gemini_s_words(tmp_path: Path, version: str) -> None:
    with ScriptedModel(HELLO) as model:
        env = IsolatedGemini(model.url, root=tmp_path, version=version)
        opts = env.gemini_options(env=_without_key(env.environ()))
        result = run_gemini_sync("hello", opts)
    assert result.error == TurnError(kind="auth", message=NO_KEY, exit_code=41)


@pytest.mark.parametrize(("version", "exit_code"), [("0.30.0", 41), ("0.15.4", 1)])
def test_no_auth_method_is_explained(tmp_path: Path, version: str, exit_code: int) -> None:
    with ScriptedModel(HELLO) as model:
        env = IsolatedGemini(model.url, root=tmp_path, version=version)
        settings = json.loads(env.settings_path.read_text())
        del settings["security"]
        env.settings_path.write_text(json.dumps(settings))
        opts = env.gemini_options(env=_without_key(env.environ()))
        result = run_gemini_sync("hello", opts)
    assert result.error is not None
    assert result.error.message == NO_AUTH.format(home=env.environ()["GEMINI_CLI_HOME"])
    assert result.error.exit_code == exit_code


@pytest.mark.parametrize("version", ["0.61.0", "0.30.0"])
def test_a_bad_resume_is_explained(tmp_path: Path, version: str) -> None:
    with ScriptedModel(HELLO) as model:
        env = IsolatedGemini(model.url, root=tmp_path, version=version)
        assert run_gemini_sync("hello", env.gemini_options()).ok
        result = run_gemini_sync("again", env.gemini_options(resume="x"))
    assert result.error is not None
    assert (result.error.kind, result.error.exit_code) == ("input", 42)
    lines = result.error.message.splitlines()
    assert lines[0] == 'Error resuming session: Invalid session identifier "x".'
    assert lines[-1] == RESUME_HINT


@pytest.mark.parametrize(
    ("args", "where"),
    [(["--json"], "json"), (["-q"], "stderr"), ([], "stdout")],
    ids=["json", "quiet", "plain"],
)
def test_every_output_of_gemwire_run_shows_the_explanation(
    tmp_path: Path, args: list[str], where: str
) -> None:
    with ScriptedModel(HELLO) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = ["run", "--cwd", str(env.workspace), "--executable", str(pinned_gemini())]
        environ: dict[str, str | None] = {**env.environ(), "GEMINI_API_KEY": None}
        result = CliRunner().invoke(main, [*argv, *args, "hi"], env=environ)
    assert result.exit_code == 5
    if where == "json":
        turn = json.loads(result.stdout.splitlines()[-1])
        assert turn["error"] == {"kind": "auth", "message": NO_KEY, "exit_code": 41}
    else:
        shown = result.stderr if where == "stderr" else result.stdout
        assert NO_KEY.splitlines()[0] in shown
        assert NO_KEY.splitlines()[1] in shown


def test_a_run_stopped_while_retrying_429s_is_rate_limited_with_the_delay(
    tmp_path: Path,
) -> None:
    per_minute = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    scenario = Scenario(turns=[Fail(429, retry_delay=7, quota_id=per_minute, repeat=20)])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        result = run_gemini_sync("hello", env.gemini_options(timeout=12))
        assert env.live_processes() == []
    assert result.error is not None
    assert (result.error.kind, result.error.retry_delay) == ("rate_limited", 7.0)
    assert result.error.message.startswith("rate limited: Gemini CLI was retrying (Attempt ")
    assert result.error.message.endswith("the run took longer than 12 s")


def test_a_daily_quota_is_quota(tmp_path: Path) -> None:
    per_day = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
    scenario = Scenario(turns=[Fail(429, retry_delay=7, quota_id=per_day, repeat=20)])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        result = run_gemini_sync("hello", env.gemini_options())
    assert result.error is not None
    assert (result.error.kind, result.error.exit_code) == ("quota", 173)
    assert result.error.message.startswith(
        "[API Error: You have exhausted your daily quota on this model.]"
    )


def _without_key(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k != "GEMINI_API_KEY"}
