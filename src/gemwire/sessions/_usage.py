"""Token usage and estimated cost across the saved sessions of a home, agent by agent.

    >>> from gemwire.sessions import usage
    >>> report = usage("/nonexistent", by="day")
    >>> report.total.requests, report.rows
    (0, [])

Every model response a session file records carries its ``tokens`` (prompt, answer, cached,
thoughts, tool-use prompt, total) and the ``model`` that answered; `usage` adds them up per
day, ISO week, month, model, project or session, and prices them with a `PriceTable`
(``cost_usd`` is an **estimate**: see `gemwire.sessions.pricing`). Subagent transcripts count
towards the session that started them.

Each agent's source (`SessionSource.usage`) says what its files record, fast: messages are
decoded only as far as usage needs (`gemwire.sessions.gemini._usage`); this module dates,
filters, prices and adds up.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, Literal

import msgspec

from gemwire.sessions._registry import Home, sources
from gemwire.sessions._source import Tokens, UsageTally
from gemwire.sessions.pricing import PriceTable, load_prices

__all__ = (
    "GROUPINGS",
    "Bound",
    "PriceSource",
    "UsageReport",
    "UsageRow",
    "crossed",
    "parse_when",
    "usage",
)

Grouping = Literal["day", "week", "month", "model", "project", "session"]
GROUPINGS: tuple[Grouping, ...] = ("day", "week", "month", "model", "project", "session")

_UNKNOWN_MODEL = "(unknown model)"


class UsageRow(msgspec.Struct, frozen=True, kw_only=True):
    """The totals of one group (``key``: a day, week, month, model, project or session).

    ``cost_usd`` prices only the models in the price table; ``unpriced_models`` lists the
    others, whose tokens are counted but not priced. It is ``None`` (unknown) when no model of
    the row has a price, never a made-up ``0.0``.
    """

    key: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    thoughts_tokens: int = 0
    tool_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = 0.0
    unpriced_models: list[str] = []


class PriceSource(msgspec.Struct, frozen=True, kw_only=True):
    """Where prices a report used come from: a page, when it was read, the models priced
    from it."""

    as_of: str
    source: str
    models: list[str]


class UsageReport(msgspec.Struct, frozen=True, kw_only=True):
    """`usage`'s answer: one row per group in order, and the total of them all."""

    by: Grouping
    rows: list[UsageRow]
    total: UsageRow
    sessions: int
    """Sessions with at least one counted response (subagents count with their parent)."""
    files: int
    problems: int
    """Lines, files, folders or databases that could not be read whole (what `load_session`
    reports as problems: lines skipped or repaired; each source's ``unread``)."""
    agents: list[str] = []
    """The agents whose sessions were read (``gemini``, …)."""
    estimate: bool = True
    """Always true: every cost is an estimate from the price table."""
    prices_as_of: str
    prices_source: str
    """The price table's date and page (a model read from another page names its own:
    `price_sources`)."""
    price_sources: list[PriceSource] = []
    """Each dated source of the prices used, with the models priced from it (the table's
    first when used)."""


class _Entry(msgspec.Struct, frozen=True, gc=False, array_like=True):
    day: date
    model: str
    project: str
    session: str
    input: int
    output: int
    cached: int
    thoughts: int
    tool: int
    total: int
    cost: float | None


def _day(timestamp: Any, tz: tzinfo | None, cache: dict[str, date]) -> date | None:
    if not isinstance(timestamp, str):
        return None
    # Responses come seconds apart: the day of the same minute is looked up once.
    minute = timestamp[:16]
    day = cache.get(minute)
    if day is None:
        try:
            moment = datetime.fromisoformat(timestamp)
        except ValueError:
            return None
        if moment.tzinfo is None:
            return moment.date()
        day = cache[minute] = moment.astimezone(tz).date()
    return day


def _key(entry: _Entry, by: Grouping) -> str:
    match by:
        case "day":
            return entry.day.isoformat()
        case "week":
            year, week, _ = entry.day.isocalendar()
            return f"{year}-W{week:02d}"
        case "month":
            return entry.day.strftime("%Y-%m")
        case "model":
            return entry.model
        case "project":
            return entry.project
    return entry.session


Bound = date | datetime
"""A day (counted whole) or a moment (a `datetime`; without a time zone, in ``tz``)."""

_AGO = re.compile(r"(\d{1,6})([dh])")


def parse_when(text: str, now: datetime) -> Bound:
    """A ``since``/``until`` as people write it: a day (counted whole) or a moment, in
    ``now``'s zone (``gemwire usage --since``, ``GET /v1/usage?since=``).

    ``today``, ``yesterday`` and an ISO date are days; ``7d`` and ``12h`` are that long before
    ``now``; an ISO date and time is that moment. Raises `ValueError` saying what is accepted.

    >>> now = datetime(2026, 11, 25, 14, 30)
    >>> [str(parse_when(t, now)) for t in ("yesterday", "2026-11-01", "7d", "12h")]
    ['2026-11-24', '2026-11-01', '2026-11-18 14:30:00', '2026-11-25 02:30:00']
    """
    value = text.strip().lower()
    if value in ("today", "yesterday"):
        return now.date() - timedelta(days=value == "yesterday")
    ago = _AGO.fullmatch(value)
    if ago is not None:
        count = int(ago.group(1))
        return now - (timedelta(days=count) if ago.group(2) == "d" else timedelta(hours=count))
    try:
        return date.fromisoformat(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is not a day or a time: 2026-11-23, today, yesterday, 7d (days ago), "
            "12h (hours ago) or 2026-11-23T09:00"
        ) from None


def bound_of(value: Bound | None, tz: tzinfo | None) -> tuple[date | None, datetime | None]:
    """The day a bound falls on in ``tz``, and the moment when it is one."""
    if value is None:
        return None, None
    if not isinstance(value, datetime):
        return value, None
    moment = aware(value, tz)
    return moment.astimezone(tz).date(), moment


def crossed(since: Bound | None, until: Bound | None, tz: tzinfo | None = None) -> bool:
    """Whether ``since`` comes after ``until``, so that nothing can be within both (a day
    is counted whole, in ``tz``).

    >>> crossed(date(2026, 11, 26), date(2026, 11, 20)), crossed(date(2026, 11, 20), None)
    (True, False)
    >>> noon = datetime(2026, 11, 20, 12, 0)
    >>> crossed(noon, date(2026, 11, 20)), crossed(date(2026, 11, 21), noon)
    (False, True)
    """
    if since is None or until is None:
        return False
    since_day, since_at = bound_of(since, tz)
    until_day, until_at = bound_of(until, tz)
    if since_at is not None and until_at is not None:
        return since_at > until_at
    return since_day is not None and until_day is not None and since_day > until_day


def aware(moment: datetime, tz: tzinfo | None) -> datetime:
    if moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()


def _within(
    timestamp: Any, since: datetime | None, until: datetime | None, tz: tzinfo | None
) -> bool:
    """Whether a response on a bound's day is on the right side of its moment."""
    try:
        moment = aware(datetime.fromisoformat(timestamp), tz)
    except (TypeError, ValueError):
        return False
    return (since is None or moment >= since) and (until is None or moment <= until)


def usage(
    home: Home = None,
    *,
    agent: str = "gemini",
    by: Grouping = "day",
    since: Bound | None = None,
    until: Bound | None = None,
    project: str | None = None,
    prices: PriceTable | None = None,
    tz: tzinfo | None = None,
) -> UsageReport:
    """Tokens and estimated cost of every model response saved in a home.

    Args:
        home: a source (a `GeminiHome`) or a list of them, or the folder holding the agents'
            folders (``.gemini``, …); default: each agent's own (``GEMINI_CLI_HOME``, else ``~``).
        agent: whose sessions: ``gemini``, …, or ``all`` (every agent gemwire reads).
        by: how rows are grouped; days, weeks (ISO, ``2026-W47``) and months in order,
            the rest by cost, then name.
        since: first day counted (inclusive), in ``tz``; or, as a `datetime`, the first
            moment (``datetime.now() - timedelta(hours=12)``).
        until: last day counted (inclusive), in ``tz``; or, as a `datetime`, the last moment.
        project: only this project: its root folder, or its folder name under ``tmp``.
        prices: the price table (default: gemwire's own, `load_prices`).
        tz: the time zone days are counted in (default: this machine's).
    """
    table = prices if prices is not None else load_prices()
    tally = UsageTally()
    entries: list[_Entry] = []
    days: dict[str, date] = {}
    priced: dict[str, bool] = {}
    since_day, since_at = bound_of(since, tz)
    until_day, until_at = bound_of(until, tz)
    moments = since_at is not None or until_at is not None
    chosen = sources(agent, home)
    for source in chosen:
        known = set(source.unread)
        for where, session, start, responses in source.usage(project, tally):
            for timestamp, recorded_model, tokens, thoughts, tool in responses:
                day = _day(timestamp, tz, days) or _day(start, tz, days)
                if (
                    day is None
                    or (since_day and day < since_day)
                    or (until_day and day > until_day)
                ):
                    continue
                # Only a response on a moment's day is placed against it (a rare, slower path).
                if moments and day in (since_day, until_day):
                    stamp = timestamp if _day(timestamp, tz, days) else start
                    if not _within(stamp, since_at, until_at, tz):
                        continue
                model = recorded_model if isinstance(recorded_model, str) else _UNKNOWN_MODEL
                entries.append(
                    _Entry(
                        day,
                        model,
                        where,
                        session,
                        tokens.input,
                        tokens.output,
                        tokens.cached,
                        thoughts,
                        tool,
                        tokens.total,
                        _cost(table, priced, model, tokens, thoughts, tool),
                    )
                )
        tally.problems += len(source.unread.keys() - known)  # a folder or database not read
    return _report(entries, by, table, tally, [source.agent for source in chosen], priced)


def _cost(
    table: PriceTable,
    known: dict[str, bool],
    model: str,
    tokens: Tokens,
    thoughts: int,
    tool: int,
) -> float | None:
    if model not in known:
        known[model] = table.price(model) is not None
    if not known[model]:
        return None
    return table.cost(
        model,
        input=tokens.input,
        output=tokens.output,
        cached=tokens.cached,
        thoughts=thoughts,
        tool=tool,
    )


class _Sum:
    __slots__ = ("cost", "counts", "priced", "unpriced")

    def __init__(self) -> None:
        self.counts = [0] * 7
        self.cost = 0.0
        self.priced = False
        self.unpriced: set[str] = set()

    def add(self, entry: _Entry) -> None:
        counts = self.counts
        counts[0] += 1
        counts[1] += entry.input
        counts[2] += entry.output
        counts[3] += entry.cached
        counts[4] += entry.thoughts
        counts[5] += entry.tool
        counts[6] += entry.total
        if entry.cost is None:
            self.unpriced.add(entry.model)
        else:
            self.cost += entry.cost
            self.priced = True

    def row(self, key: str) -> UsageRow:
        requests, input_, output, cached, thoughts, tool, total = self.counts
        return UsageRow(
            key=key,
            requests=requests,
            input_tokens=input_,
            output_tokens=output,
            cached_tokens=cached,
            thoughts_tokens=thoughts,
            tool_tokens=tool,
            total_tokens=total,
            cost_usd=None if self.unpriced and not self.priced else self.cost,
            unpriced_models=sorted(self.unpriced),
        )


def _report(
    entries: list[_Entry],
    by: Grouping,
    table: PriceTable,
    tally: UsageTally,
    agents: list[str],
    priced: dict[str, bool],
) -> UsageReport:
    groups: dict[str, _Sum] = {}
    total = _Sum()
    sessions = set()
    for entry in entries:
        key = _key(entry, by)
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Sum()
        group.add(entry)
        total.add(entry)
        sessions.add(entry.session)
    rows = [group.row(key) for key, group in groups.items()]
    if by in ("day", "week", "month"):
        rows.sort(key=lambda row: row.key)
    else:
        rows.sort(key=lambda row: (-(row.cost_usd or 0.0), -row.total_tokens, row.key))
    return UsageReport(
        by=by,
        rows=rows,
        total=total.row("total"),
        sessions=len(sessions),
        files=tally.files,
        problems=tally.problems,
        agents=agents,
        prices_as_of=table.as_of,
        prices_source=table.source,
        price_sources=_price_sources(
            table, sorted(model for model, known in priced.items() if known)
        ),
    )


def _price_sources(table: PriceTable, models: list[str]) -> list[PriceSource]:
    """Each dated page the prices of ``models`` were read from, the table's own first."""
    pages: dict[tuple[str, str], list[str]] = {}
    for model in models:
        price = table.price(model)
        if price is not None:
            page = (price.as_of or table.as_of, price.source or table.source)
            pages.setdefault(page, []).append(model)
    own = (table.as_of, table.source)
    ordered = sorted(pages, key=lambda page: (page != own, page))
    return [PriceSource(as_of=a, source=s, models=pages[a, s]) for a, s in ordered]
