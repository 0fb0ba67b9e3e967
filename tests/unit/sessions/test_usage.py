"""`gemwire.sessions.usage` and its price table, against plain sums over recorded sessions."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.errors import InvalidOptions
from gemwire.sessions import usage
from gemwire.sessions.gemini import load_session
from gemwire.sessions.pricing import ModelPrice, PriceTable, load_prices
from gemwire.wire.gemini_session import MessageRecord


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A helper bench/usage.py shares; loaded by path (tests are not a package).
usage_home = _load(Path(__file__).with_name("usage_home.py"))

FLAT = PriceTable(
    as_of="test",
    source="test",
    models={
        # Round rates, so that a plain sum in floats is exact enough to compare.
        "gemini-3.8-flash": ModelPrice(input=1.0, output=2.0, cached=0.5),
        "gemini-3-flash-preview": ModelPrice(input=3.0, output=4.0),
        "gemini-2.5-pro": ModelPrice(input=5.0, output=6.0, cached=1.0),
    },
)


def _plain_sum(unit: Any, tmp: Path) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """The tokens of a recording's responses, counted with `load_session`: overall and by
    model; a response recorded in two files of one session counts once."""
    folder = tmp / "unit"
    for relative, data in unit.files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(data, encoding="utf-8")
    seen: set[tuple[str | None, str]] = set()
    total: Counter[str] = Counter()
    by_model: dict[str, Counter[str]] = defaultdict(Counter)
    for relative in unit.files:
        conversation = load_session(folder / relative)
        for message in conversation.messages:
            if not (isinstance(message, MessageRecord) and message.type == "gemini"):
                continue
            if not message.tokens or (conversation.session_id, message.id) in seen:
                continue
            seen.add((conversation.session_id, message.id))
            tokens = message.tokens
            counts = {
                "requests": 1,
                "input": tokens.input,
                "output": tokens.output,
                "cached": tokens.cached,
                "thoughts": tokens.thoughts or 0,
                "tool": tokens.tool or 0,
                "total": tokens.total,
            }
            model = message.model if isinstance(message.model, str) else "(unknown model)"
            price = FLAT.models.get(model)
            if price is not None:
                cached = price.cached if price.cached is not None else price.input
                counts["micro_usd"] = round(
                    (tokens.input - tokens.cached + (tokens.tool or 0)) * price.input
                    + tokens.cached * cached
                    + (tokens.output + (tokens.thoughts or 0)) * price.output
                )
            total.update(counts)
            by_model[model].update(counts)
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    return total, by_model


def _row(row: Any) -> dict[str, int | None]:
    return {
        "requests": row.requests,
        "input": row.input_tokens,
        "output": row.output_tokens,
        "cached": row.cached_tokens,
        "thoughts": row.thoughts_tokens,
        "tool": row.tool_tokens,
        "total": row.total_tokens,
        "micro_usd": None if row.cost_usd is None else round(row.cost_usd * 1_000_000),
    }


def _expected(counter: Counter[str]) -> dict[str, int | None]:
    """The row a plain sum expects: no cost (``None``) when nothing in it had a price."""
    keys = ("requests", "input", "output", "cached", "thoughts", "tool", "total")
    return {**{key: counter[key] for key in keys}, "micro_usd": counter.get("micro_usd")}


@pytest.fixture(scope="module")
def big_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any], dict[str, Any]]:
    root = tmp_path_factory.mktemp("usage")
    # Every recording about ten times over 90 days and three projects: the sums are exact at
    # any size; the time of 10,000 sessions is bench/usage.py's (BENCHMARKS.md).
    copies = usage_home.make_home(root / "home", 1_000)
    by_unit = {unit.chats: _plain_sum(unit, root) for unit in usage_home.units()}
    return root / "home", copies, by_unit


def test_totals_of_a_thousand_sessions_equal_a_plain_sum(big_home: Any) -> None:
    home, copies, by_unit = big_home
    per_day: dict[str, Counter[str]] = defaultdict(Counter)
    per_project: dict[str, Counter[str]] = defaultdict(Counter)
    per_model: dict[str, Counter[str]] = defaultdict(Counter)
    total: Counter[str] = Counter()
    for n, unit in copies:
        unit_total, unit_models = by_unit[unit.chats]
        per_day[usage_home.day_of(n).isoformat()].update(unit_total)
        per_project[usage_home.project_of(n)].update(unit_total)
        for model, counts in unit_models.items():
            per_model[model].update(counts)
        total.update(unit_total)

    report = usage(home, by="day", prices=FLAT, tz=None)

    assert sum(1 for _ in home.rglob("session-*")) >= 1_000
    assert report.problems == 0
    assert _row(report.total) == _expected(total)
    assert [row.key for row in report.rows] == sorted(k for k in per_day if per_day[k]["requests"])
    assert {row.key: _row(row) for row in report.rows} == {
        key: _expected(c) for key, c in per_day.items() if c["requests"]
    }
    by_project = usage(home, by="project", prices=FLAT)
    assert {row.key: _row(row) for row in by_project.rows} == {
        key: _expected(c) for key, c in per_project.items()
    }
    by_model = usage(home, by="model", prices=FLAT)
    assert {row.key: _row(row) for row in by_model.rows} == {
        key: _expected(c) for key, c in per_model.items()
    }
    unpriced = sorted(set(per_model) - set(FLAT.models))
    assert by_model.total.unpriced_models == unpriced
    assert report.estimate is True


@pytest.mark.slow
def test_filters_by_day_and_project(big_home: Any) -> None:
    home, copies, by_unit = big_home
    since, until = date(2026, 9, 10), date(2026, 9, 16)
    expected: Counter[str] = Counter()
    days = set()
    for n, unit in copies:
        if since <= usage_home.day_of(n) <= until and usage_home.project_of(n) == "/work/beta":
            expected.update(by_unit[unit.chats][0])
            days.add(usage_home.day_of(n).isoformat())

    report = usage(home, by="day", since=since, until=until, project="/work/beta", prices=FLAT)

    assert [row.key for row in report.rows] == sorted(days)
    assert len(days) >= 2
    assert _row(report.total) == _expected(expected)
    by_folder = usage(home, since=since, until=until, project="beta", prices=FLAT)
    assert by_folder.total == report.total


@pytest.mark.slow
def test_weeks_and_months_are_ordered_keys(big_home: Any) -> None:
    home, _, _ = big_home
    weeks = usage(home, by="week", prices=FLAT)
    months = usage(home, by="month", prices=FLAT)
    assert [row.key for row in months.rows] == ["2026-09", "2026-10", "2026-11"]
    assert weeks.rows[0].key == "2026-W36"
    assert [row.key for row in weeks.rows] == sorted(row.key for row in weeks.rows)
    assert weeks.total == months.total


def test_subagent_tokens_count_towards_the_session_that_started_them(
    materialize: Any,
) -> None:
    run = materialize("0.61.0", "session_subagent", "json")
    report = usage(run.home, by="session", prices=FLAT)
    [row] = report.rows
    parent = json.loads(run.session_files()[0].read_text().splitlines()[0])["sessionId"]
    assert row.key == parent
    # Two responses of the parent, two of the subagent (gemini-3-flash-preview).
    assert (row.requests, row.total_tokens) == (4, 440)
    assert report.sessions == 1


def test_a_session_copied_into_the_new_layout_counts_once(materialize: Any) -> None:
    run = materialize("0.61.0", "thoughts")
    once = usage(run.home, prices=FLAT).total
    copy = run.home / ".gemini" / "tmp" / ("a" * 64) / "chats"
    copy.mkdir(parents=True)
    for path in run.session_files():
        (copy / path.name).write_bytes(path.read_bytes())
    assert usage(run.home, prices=FLAT).total == once
    assert once.requests == 1
    assert (once.input_tokens, once.output_tokens, once.thoughts_tokens) == (120, 8, 30)


def test_prices_tiers_prefixes_and_unknown_models() -> None:
    table = load_prices()
    assert table.as_of
    assert table.source.startswith("https://ai.google.dev/")
    pro = table.models["gemini-2.5-pro"]
    assert table.cost("gemini-2.5-pro", input=100_000, output=1_000) == pytest.approx(
        (100_000 * pro.input + 1_000 * pro.output) / 1e6
    )
    assert table.cost("gemini-2.5-pro", input=300_000, output=1_000) == pytest.approx(
        (300_000 * 2.5 + 1_000 * 15.0) / 1e6
    )
    assert table.cost(
        "gemini-2.5-flash", input=1_000, output=10, cached=400, thoughts=90, tool=5
    ) == pytest.approx((605 * 0.3 + 400 * 0.03 + 100 * 2.5) / 1e6)
    assert (
        table.price("gemini-2.5-flash-lite-preview-09-2025")
        == table.models["gemini-2.5-flash-lite"]
    )
    assert table.price("gemini-2.5-flashy") is None
    assert table.cost("no-such-model", input=1, output=1) is None


def test_a_users_price_file_is_laid_over_the_shipped_table(tmp_path: Path) -> None:
    toml = tmp_path / "prices.toml"
    toml.write_text(
        'as_of = "2026-11-01"\n[models."gemini-3.8-flash"]\ninput = 0.25\noutput = 1.5\n'
    )
    table = load_prices(toml)
    assert table.as_of == "2026-11-01"
    assert table.models["gemini-3.8-flash"] == ModelPrice(input=0.25, output=1.5)
    assert "gemini-2.5-pro" in table.models
    assert str(toml) in table.source
    as_json = tmp_path / "prices.json"
    as_json.write_text(json.dumps({"models": {"m": {"input": 1, "output": 2}}}))
    assert load_prices(as_json).models["m"] == ModelPrice(input=1, output=2)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.json", "{", "is not valid"),
        ("bad.toml", "models = 3", "is not valid"),
        ("shape.json", '{"models": {"m": {"input": "cheap"}}}', "is not valid"),
        ("missing.json", None, "cannot read"),
    ],
)
def test_a_bad_price_file_is_a_clear_error(
    tmp_path: Path, name: str, text: str | None, message: str
) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(InvalidOptions, match=message):
        load_prices(path)


def test_an_empty_or_missing_home_reports_nothing(tmp_path: Path) -> None:
    report = usage(tmp_path)
    assert (report.rows, report.total.requests, report.sessions, report.files) == ([], 0, 0, 0)


def _timed_home(home: Path) -> None:
    """One session, one response at each of 09:00, 10:30 and 12:00 UTC on 2026-11-20; the
    first by a model with no price."""
    chats = home / ".gemini" / "tmp" / ("b" * 64) / "chats"
    chats.mkdir(parents=True)
    header = {"sessionId": "s-1", "projectHash": "b" * 64, "startTime": "2026-11-20T09:00:00Z"}
    lines = [json.dumps(header)]
    for n, (at, model) in enumerate(
        (("09:00", "no-such-model"), ("10:30", "gemini-2.5-flash"), ("12:00", "gemini-2.5-flash"))
    ):
        tokens = {"input": 1000, "output": 100, "cached": 0, "total": 1100}
        lines.append(
            json.dumps(
                {
                    "id": f"g{n}",
                    "type": "gemini",
                    "timestamp": f"2026-11-20T{at}:00Z",
                    "content": "x",
                    "model": model,
                    "tokens": tokens,
                }
            )
        )
    (chats / "session-2026-11-20T09-00-s1aaaaaa.jsonl").write_text("\n".join(lines) + "\n")


def test_a_model_with_no_price_costs_unknown_not_zero(tmp_path: Path) -> None:
    _timed_home(tmp_path)
    by_model = usage(tmp_path, by="model", tz=UTC)
    assert [(row.key, row.cost_usd, row.unpriced_models) for row in by_model.rows] == [
        ("gemini-2.5-flash", pytest.approx(2 * (1000 * 0.3 + 100 * 2.5) / 1e6), []),
        ("no-such-model", None, ["no-such-model"]),
    ]
    assert by_model.total.cost_usd == pytest.approx(2 * (1000 * 0.3 + 100 * 2.5) / 1e6)
    only_unpriced = usage(tmp_path, by="day", until=datetime(2026, 11, 20, 10, tzinfo=UTC))
    assert [(r.key, r.requests, r.cost_usd) for r in only_unpriced.rows] == [
        ("2026-11-20", 1, None)
    ]
    assert only_unpriced.total.cost_usd is None
    assert b'"cost_usd":null' in msgspec.json.encode(only_unpriced.total)


@pytest.mark.parametrize(
    ("since", "until", "requests"),
    [
        (datetime(2026, 11, 20, 10, 0, tzinfo=UTC), None, 2),
        (datetime(2026, 11, 20, 10, 30, tzinfo=UTC), None, 2),  # inclusive
        (datetime(2026, 11, 20, 10, 31, tzinfo=UTC), None, 1),
        (datetime(2026, 11, 20, 11, 0), datetime(2026, 11, 20, 12, 0), 1),  # naive: in tz
        (date(2026, 11, 20), datetime(2026, 11, 20, 9, 59, tzinfo=UTC), 1),
        (datetime(2026, 11, 19, 23, 0, tzinfo=UTC), date(2026, 11, 20), 3),
        (datetime(2026, 11, 20, 12, 0, 1, tzinfo=UTC), None, 0),
        (datetime(2026, 11, 20, 13, 0, tzinfo=timezone(timedelta(hours=2))), None, 1),
    ],
)
def test_since_and_until_can_be_moments(
    tmp_path: Path, since: date | None, until: date | None, requests: int
) -> None:
    _timed_home(tmp_path)
    report = usage(tmp_path, since=since, until=until, tz=UTC)
    assert report.total.requests == requests


@pytest.mark.parametrize(
    ("model", "priced_as", "host"),
    [
        ("claude-sonnet-4-5-20250929", (3.0, 15.0, 0.3), "www.claude.com"),
        ("claude-haiku-4-5-20251001", (1.0, 5.0, 0.1), "www.claude.com"),
        ("gpt-5-codex", (1.25, 10.0, 0.125), "openai.com"),
        ("o3-mini", (1.1, 4.4, 0.55), "openai.com"),
        ("qwen3-coder-plus", (1.0, 5.0, None), "www.alibabacloud.com"),
    ],
)
def test_anthropic_openai_and_qwen_models_are_priced_with_their_date_and_page(
    model: str, priced_as: tuple[float, float, float | None], host: str
) -> None:
    price = load_prices().price(model)
    assert price is not None
    assert (price.input, price.output, price.cached) == priced_as
    assert price.as_of == "2025-11-24"
    assert (price.source or "").startswith(f"https://{host}/")


def test_a_model_without_a_price_stays_unpriced() -> None:
    """Codex's scripted model is named like an OpenAI model that has no price yet."""
    assert load_prices().price("gpt-5.4-mini") is None


@pytest.mark.parametrize(
    ("command", "since", "until", "said"),
    [
        (["usage"], "today", "yesterday", None),
        (["sessions", "search", "go"], "2026-11-26", "2026-11-20", "2026-11-26 … 2026-11-20"),
        (["usage", "--json"], "2026-11-20T12:00", "2026-11-20T09:00", None),
    ],
)
def test_since_after_until_is_a_usage_error_in_one_line(
    command: list[str], since: str, until: str, said: str | None, tmp_path: Path
) -> None:
    """Nothing is between them: an empty report (exit 0) or no result (exit 1) hid the slip."""
    env = {"GEMINI_CLI_HOME": str(tmp_path), "HOME": str(tmp_path)}
    result = CliRunner(env=env).invoke(main, [*command, "--since", since, "--until", until])
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: --since ")
    assert " is after --until " in line
    if said is not None:
        first, last = said.split(" … ")
        assert line == f"Error: --since {first} is after --until {last}"
    assert result.stdout == ""
