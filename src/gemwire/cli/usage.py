"""``gemwire usage``: tokens and estimated cost of saved sessions (``--agent``: whose).

Exit status: 0 done; 2 usage error (a bad date, or a price file that cannot be read).
Model names, project paths and session ids come from session files: what is shown of them
goes through `terminal_safe` (and is never read as Rich markup).
"""

from __future__ import annotations

import sys
from datetime import date
from typing import TYPE_CHECKING

import click

from gemwire.cli.safe_text import terminal_safe
from gemwire.cli.sessions import (
    agent_option,
    agent_sources,
    check_window,
    warn_unread,
    when_option,
)

if TYPE_CHECKING:
    from rich.console import Console

    from gemwire.sessions import UsageReport, UsageRow

__all__ = ("usage",)

_BAR_WIDTH = 40
# gemwire.sessions' GROUPINGS, spelled out: importing the sessions stack here would slow
# down `gemwire --help` (a test keeps the two equal).
_GROUPINGS = ("day", "week", "month", "model", "project", "session")


@click.command()
@agent_option
@click.option(
    "--gemini-home",
    type=click.Path(file_okay=False),
    help="The folder holding .gemini (default: GEMINI_CLI_HOME, else your home).",
)
@click.option(
    "--by",
    type=click.Choice(_GROUPINGS),
    default="day",
    show_default=True,
    help="One row per day, ISO week, month, model, project or session.",
)
@click.option(
    "--since",
    metavar="WHEN",
    callback=when_option,
    help="First day counted (2026-11-01, today, yesterday), or first moment (7d, 12h: that "
    "long ago; 2026-11-01T09:00).",
)
@click.option(
    "--until",
    metavar="WHEN",
    callback=when_option,
    help="Last day counted, or last moment: as --since.",
)
@click.option("--project", help="Only this project: its root folder, or its folder in .gemini/tmp.")
@click.option(
    "--prices",
    type=click.Path(dir_okay=False),
    help="A price table (JSON or TOML) laid over gemwire's own.",
)
@click.option("--json", "as_json", is_flag=True, help="The report as one JSON document.")
def usage(
    agent: str,
    gemini_home: str | None,
    by: str,
    since: date | None,
    until: date | None,
    project: str | None,
    prices: str | None,
    as_json: bool,
) -> None:
    """Tokens and estimated cost of your saved sessions (Gemini's, or --agent's).

    Every cost is an estimate from a dated price table (see --prices and docs/sessions.md).

    \b
    gemwire usage
    gemwire usage --by model --since 2026-11-01
    gemwire usage --since 7d
    gemwire usage --by project --json
    """
    import msgspec

    from gemwire.errors import InvalidOptions
    from gemwire.sessions import usage as collect
    from gemwire.sessions.pricing import load_prices

    check_window(since, until)
    try:
        table = load_prices(prices)
    except InvalidOptions as exc:
        raise click.UsageError(terminal_safe(str(exc))) from exc
    homes = agent_sources(agent, gemini_home)
    report = collect(
        homes,
        by=by,  # type: ignore[arg-type]  # one of _GROUPINGS, checked by click
        since=since,
        until=until,
        project=project,
        prices=table,
    )
    warn_unread(homes)
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(report) + b"\n")
        return
    from rich.console import Console

    show_report(Console(highlight=False), report)


def _money(value: float | None) -> str:
    if value is None:
        return "?"  # nothing it counts has a price
    if value == 0 or value >= 0.01:
        return f"${value:,.2f}"
    return f"${value:.4f}" if value >= 0.0001 else "<$0.0001"


def _cost(row: UsageRow) -> str:
    if row.cost_usd is None:
        return "?"
    return _money(row.cost_usd) + ("*" if row.unpriced_models else "")


def _tokens(count: int) -> str:
    """Exact below 100,000; then 123.4k, 12.3M (the JSON has them exact)."""
    if count < 100_000:
        return f"{count:,}"
    if count < 10_000_000:
        return f"{count / 1000:,.1f}k"
    return f"{count / 1_000_000:,.1f}M"


def show_report(console: Console, report: UsageReport) -> None:
    """The report as a table, then (by day) a bar of cost per day, then where prices come from."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if not report.rows:
        console.print("No model responses found in the saved sessions.")
        _show_problems(console, report)
        return
    from gemwire.sessions import AGENT_NAMES

    whose = " + ".join(AGENT_NAMES.get(agent, agent) for agent in report.agents) or "Session"
    table = Table(
        title=f"{whose} usage by {report.by} (cost is an estimate)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    keys = [terminal_safe(row.key) for row in report.rows]
    longest = max(map(len, keys))
    table.add_column(report.by.capitalize(), min_width=min(longest, 12), overflow="fold")
    total = report.total
    # Columns that are zero throughout (often cached, thoughts, tool) only take room.
    counts = [
        (name, field)
        for name, field, always in (
            ("Input", "input_tokens", True),
            ("Output", "output_tokens", True),
            ("Cached", "cached_tokens", False),
            ("Thought", "thoughts_tokens", False),
            ("Tool", "tool_tokens", False),
            ("Total", "total_tokens", True),
        )
        if always or getattr(total, field)
    ]
    for name in ("Reqs", *(name for name, _ in counts), "Cost"):
        table.add_column(name, justify="right", no_wrap=True)
    for key, row in [*zip(keys, report.rows, strict=True), ("total", total)]:
        table.add_row(
            Text(key),
            f"{row.requests:,}",
            *(_tokens(getattr(row, field)) for _, field in counts),
            _cost(row),
            end_section=row is report.rows[-1],
            style="bold" if row is total else None,
        )
    console.print(table)
    if report.by == "day" and len(report.rows) > 1:
        console.print(cost_bars(report.rows) + "\n", markup=False)
    console.print(
        terminal_safe(f"{report.sessions:,} session{'' if report.sessions == 1 else 's'}."),
        markup=False,
    )
    # The dated page of every price used (the table's, an Anthropic model's, ...).
    pages = [(p.as_of, p.source, f" ({', '.join(p.models)})") for p in report.price_sources]
    for as_of, source, models in pages or [(report.prices_as_of, report.prices_source, "")]:
        console.print(terminal_safe(f"Prices as of {as_of}: {source}{models}."), markup=False)
    if report.total.unpriced_models:
        models = terminal_safe(", ".join(report.total.unpriced_models))
        console.print(
            f"No price known for {models}: its tokens are counted, not priced (* partly, "
            "? not at all); add prices with --prices.",
            markup=False,
        )
    _show_problems(console, report)


def _show_problems(console: Console, report: UsageReport) -> None:
    """What could not be counted: the totals leave it out."""
    count = report.problems
    if count:
        console.print(
            f"{count:,} problem{'' if count == 1 else 's'} reading the saved sessions "
            "(lines skipped or repaired; files, folders or databases not read, and not counted).",
            markup=False,
        )


def cost_bars(rows: list[UsageRow], width: int = _BAR_WIDTH) -> str:
    """A bar per row, as long as its cost is against the largest (``█`` and ``▏`` steps);
    ``?`` and no bar for a row with no price.

    >>> from gemwire.sessions import UsageRow
    >>> rows = [UsageRow(key="a", cost_usd=2.0), UsageRow(key="b", cost_usd=0.5)]
    >>> print(cost_bars([*rows, UsageRow(key="c", cost_usd=None)], 8))
    a ████████ $2.00
    b ██       $0.50
    c          ?
    """
    most = max((row.cost_usd or 0.0 for row in rows), default=0.0)
    keys = [terminal_safe(row.key) for row in rows]
    label = max(map(len, keys))
    lines = []
    for key, row in zip(keys, rows, strict=True):
        cost = row.cost_usd or 0.0
        filled = round(cost / most * width) if most > 0 else 0
        bar = "█" * filled or ("▏" if cost > 0 else "")
        lines.append(f"{key:<{label}} {bar:<{width}} {_money(row.cost_usd)}")
    return "\n".join(lines)
