"""`gemwire usage`: the JSON report, the terminal table and bars, filters, price files."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from kit.corpus import RECORDED

from gemwire.cli import main
from gemwire.sessions import parse_when

RECORDING = RECORDED / "session_subagent" / "json" / "gemini-home"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The recorded subagent session's home, with its placeholders made real."""
    workspace = tmp_path / "workspace"
    replacements = {
        "__PROJECT_HASH__": hashlib.sha256(str(workspace).encode()).hexdigest(),
        "__WORKSPACE__": str(workspace),
        "__HOME__": str(tmp_path / "home"),
    }
    target = tmp_path / "home" / ".gemini"
    shutil.copytree(RECORDING, target)
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_text()
            for old, new in replacements.items():
                text = text.replace(old, new)
            path.write_text(text)
    return tmp_path / "home"


def usage(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    environ = {"GEMWIRE_CONFIG": "/nonexistent/config.toml", "TZ": "UTC", **(env or {})}
    result = CliRunner().invoke(main, ["usage", *args], env=environ)
    return result.exit_code, result.stdout, result.stderr


def test_json_report_of_a_recorded_home(home: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {"as_of": "2026-11-01", "models": {"gemini-3.8-flash": {"input": 1, "output": 2}}}
        )
    )
    code, out, _ = usage(
        "--gemini-home", str(home), "--by", "model", "--prices", str(prices), "--json"
    )
    assert code == 0
    report = json.loads(out)
    assert [(r["key"], r["requests"], r["total_tokens"]) for r in report["rows"]] == [
        ("gemini-3.8-flash", 2, 220),
        ("gemini-3-flash-preview", 2, 220),
    ]
    assert report["rows"][0]["cost_usd"] == pytest.approx((200 * 1 + 20 * 2) / 1e6)
    assert report["total"]["unpriced_models"] == []
    assert (report["estimate"], report["prices_as_of"], report["sessions"]) == (
        True,
        "2026-11-01",
        1,
    )
    assert report["prices_source"].startswith(str(prices))


def test_terminal_table_says_estimate_and_names_unpriced_models(home: Path) -> None:
    code, out, _ = usage("--gemini-home", str(home))
    assert code == 0
    assert "Gemini usage by day (cost is an estimate)" in out
    assert "2026-11-22" in out
    assert "No price known for gemini-3.8-flash: its tokens are counted" in out
    assert "Prices as of 2025-12-17" in out


def test_the_price_file_can_come_from_the_config(home: Path, tmp_path: Path) -> None:
    prices = tmp_path / "p.toml"
    prices.write_text('as_of = "from-config"\n')
    code, out, _ = usage("--gemini-home", str(home), "--json", env={"GEMWIRE_PRICES": str(prices)})
    assert code == 0
    assert json.loads(out)["prices_as_of"] == "from-config"


def test_filters_that_match_nothing_say_so(home: Path) -> None:
    code, out, _ = usage("--gemini-home", str(home), "--since", "2026-11-23")
    assert (code, out) == (0, "No model responses found in the saved sessions.\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "someday"], "'someday' is not a day or a time: 2026-11-23, today,"),
        (["--until", "7w"], "'7w' is not a day or a time"),
        (["--prices", "/nonexistent/prices.toml"], "cannot read the price table"),
        (["--by", "hour"], "'hour' is not one of"),
    ],
)
def test_bad_options_are_usage_errors(home: Path, args: list[str], message: str) -> None:
    code, _, err = usage("--gemini-home", str(home), *args)
    assert code == 2
    assert message in err


def test_the_groupings_are_the_libraries() -> None:
    from gemwire.cli.usage import _GROUPINGS
    from gemwire.sessions import GROUPINGS

    assert _GROUPINGS == GROUPINGS


NOW = datetime(2026, 11, 25, 14, 30, tzinfo=timezone(timedelta(hours=1)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today", date(2026, 11, 25)),
        ("Yesterday", date(2026, 11, 24)),
        ("2026-11-01", date(2026, 11, 1)),
        ("7d", NOW - timedelta(days=7)),
        ("0d", NOW),
        ("12h", NOW - timedelta(hours=12)),
        ("2026-11-23T09:00", datetime(2026, 11, 23, 9, 0)),
        ("2026-11-23T09:00:00+02:00", datetime(2026, 11, 23, 7, 0, tzinfo=UTC)),
    ],
)
def test_since_and_until_take_days_and_moments(text: str, expected: date) -> None:
    found = parse_when(text, NOW)
    assert (found, type(found)) == (expected, type(expected))


def test_relative_bounds_reach_the_report(home: Path) -> None:
    def total(*args: str) -> int:
        code, out, err = usage("--gemini-home", str(home), "--json", *args)
        assert (code, err) == (0, "")
        return int(json.loads(out)["total"]["requests"])

    everything = total()
    assert everything == 4
    assert total("--since", "36500d") == everything  # the last hundred years
    assert total("--until", "36500d") == 0  # before then
    assert total("--since", "876000h", "--until", "today") == everything
    for text in ("yesterday", "today", "7d", "1h"):
        total("--since", text)  # accepted (what they count depends on today)


def test_unpriced_cost_is_null_in_json_and_a_question_mark_in_the_table(home: Path) -> None:
    code, out, _ = usage("--gemini-home", str(home), "--by", "model", "--json")
    assert code == 0
    report = json.loads(out)
    assert [(r["key"], r["cost_usd"]) for r in report["rows"]] == [
        ("gemini-3-flash-preview", pytest.approx(0.00016)),
        ("gemini-3.8-flash", None),  # no price: unknown, not free
    ]
    assert report["total"]["cost_usd"] == pytest.approx(0.00016)  # partly priced
    assert report["total"]["unpriced_models"] == ["gemini-3.8-flash"]
    code, out, _ = usage("--gemini-home", str(home), "--by", "model")
    rows = [line.split() for line in out.splitlines() if line.startswith((" gemini", " total"))]
    assert [(row[0], row[-1]) for row in rows] == [
        ("gemini-3-flash-preview", "$0.0002"),
        ("gemini-3.8-flash", "?"),
        ("total", "$0.0002*"),
    ]
    code, out, _ = usage("--gemini-home", str(home), "--by", "model", "--json", "--project", "x")
    assert json.loads(out)["total"]["cost_usd"] == 0.0  # nothing counted costs nothing


def test_agent_all_reads_every_source_and_names_them(home: Path) -> None:
    claude = {"CLAUDE_CONFIG_DIR": str(home / "no-claude-here")}
    code, gemini, _ = usage("--gemini-home", str(home), "--json")
    code_all, every, _ = usage("--gemini-home", str(home), "--agent", "all", "--json", env=claude)
    assert (code, code_all) == (0, 0)
    # Claude Code saved nothing here: the same rows, read from both agents.
    agents = ["gemini", "claude", "codex", "qwen", "opencode", "antigravity"]
    assert json.loads(every) == {**json.loads(gemini), "agents": agents}


def test_agent_choices_are_the_agents_of_sessions_and_all() -> None:
    from gemwire.cli.sessions import AGENT_CHOICES
    from gemwire.sessions import AGENTS

    assert (*AGENTS, "all") == AGENT_CHOICES.choices
