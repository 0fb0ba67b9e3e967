"""Saved sessions and usage over HTTP: what ``gemwire sessions list|export`` and
``gemwire usage`` show, from the homes of the server (`ServerConfig.sessions_home`).

    GET /v1/saved-sessions?agent=all&project=&since=&until=&q=&limit=&offset=
                {"sessions": [SessionInfo], "total", "offset", "agents": [...], "projects": [...]}
    GET /v1/saved-sessions/search?text=&agent=all&project=&since=&until=&limit=
                                                  {"hits": [search --json lines], "more": bool}
    GET /v1/saved-sessions/{agent}/{id}?format=events|json|markdown|html
    GET /v1/usage?agent=all&since=&until=&by=day|...&project=     UsageReport

Every agent gemwire reads the sessions of is asked through the registry
(`gemwire.sessions.sources`), so a new source shows up here by itself. A session is
reached only by an id its agent's listing gives, never by a path. Reading files runs in a
worker thread: the event loop keeps serving the live sessions meanwhile.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import datetime, time, timedelta, tzinfo
from typing import TypeVar

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from gemwire.errors import InvalidOptions, SessionError, SessionNotFound
from gemwire.serve_api import SavedAgent, SavedSearch, SavedSearchHit, SavedSessions
from gemwire.server.responses import ApiError, BadRequest, JsonResponse, NotFound
from gemwire.server.state import app_state
from gemwire.sessions import (
    AGENT_NAMES,
    AGENTS,
    GROUPINGS,
    SessionInfo,
    SessionSource,
    export_lines,
    json_safe,
    parse_when,
    search,
    source,
    sources,
    usage,
)
from gemwire.sessions._usage import Bound, bound_of

__all__ = ("ROUTES", "SAVED_FORMATS", "TRANSCRIPT_CSP")

T = TypeVar("T")

SAVED_FORMATS = ("events", "json", "markdown", "html")
"""``format=`` of one saved session; ``json`` is the session and its Claude-compatible
messages (``gemwire sessions export --format claude``)."""

TRANSCRIPT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'; sandbox"
)
"""An HTML transcript runs nothing and loads nothing: session data is the attacker's text."""

MAX_ID = 256
"""Characters of a session id: every agent's are far shorter (a UUID is 36)."""
MAX_QUERY_VALUE = 4096
"""Characters a query value may have (a path, a search): more is a mistake or an attack."""
SEARCH_LIMIT = 200
"""Sessions a search answers with at most (and by default): a page's worth."""


def _query(request: Request, name: str, choices: tuple[str, ...] = ()) -> str | None:
    value = request.query_params.get(name)
    if value is None or value == "":
        return None
    if len(value) > MAX_QUERY_VALUE:
        raise BadRequest(f"{name} is over {MAX_QUERY_VALUE} characters")
    if "\0" in value:
        raise BadRequest(f"{name} holds a NUL byte")
    if choices and value not in choices:
        raise BadRequest(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def _bound(request: Request, name: str) -> Bound | None:
    value = _query(request, name)
    if value is None:
        return None
    try:
        return parse_when(value, datetime.now().astimezone())
    except ValueError as exc:
        raise BadRequest(f"{name}: {exc}") from None


def _instant(bound: Bound, tz: tzinfo | None, *, end: bool) -> datetime:
    """A bound's moment; a day's first (``end``: last) moment in ``tz``."""
    day, moment = bound_of(bound, tz)
    if moment is not None:
        return moment
    assert day is not None
    start = datetime.combine(day, time.min, tzinfo=tz)
    return start + timedelta(days=1, microseconds=-1) if end else start


def _bounds(request: Request) -> tuple[Bound | None, Bound | None]:
    """``since`` and ``until``; a range that ends before it starts is refused, not empty."""
    since, until = _bound(request, "since"), _bound(request, "until")
    if since is not None and until is not None:
        tz = datetime.now().astimezone().tzinfo
        if _instant(since, tz, end=False) > _instant(until, tz, end=True):
            raise BadRequest(
                f"since ({request.query_params['since']}) is after until "
                f"({request.query_params['until']}): nothing can match"
            )
    return since, until


def _sources(request: Request, agent: str) -> list[SessionSource]:
    home = app_state(request).config.sessions_home
    try:
        return sources(agent, home)
    except InvalidOptions as exc:
        raise BadRequest(str(exc)) from exc


async def _in_thread(work: Callable[[], T]) -> T:
    # Listing and loading read files (thousands for a busy home): never in the event loop.
    return await anyio.to_thread.run_sync(work)


def _moment(text: str | None, tz: tzinfo | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz)


def _within(info: SessionInfo, since: Bound | None, until: Bound | None) -> bool:
    """Whether the session was last updated within the bounds (days in the server's zone;
    a moment without a zone is in the server's zone too)."""
    if since is None and until is None:
        return True
    tz = datetime.now().astimezone().tzinfo
    updated = _moment(info.last_updated or info.start_time, tz)
    if updated is None:
        return False
    for bound, after in ((since, True), (until, False)):
        if bound is None:
            continue
        if isinstance(bound, datetime):
            at = bound if bound.tzinfo is not None else bound.replace(tzinfo=tz)
            if (updated < at) if after else (updated > at):
                return False
        else:
            day = updated.astimezone(tz).date()
            if (day < bound) if after else (day > bound):
                return False
    return True


def _matches(info: SessionInfo, query: str | None) -> bool:
    if query is None:
        return True
    needle = query.casefold()
    return any(
        needle in (text or "").casefold() for text in (info.id, info.summary, info.first_prompt)
    )


def _unread(chosen: list[SessionSource]) -> dict[str, str]:
    return {path: why for home in chosen for path, why in home.unread.items()}


def _newest_first(infos: list[SessionInfo]) -> list[SessionInfo]:
    """Last updated (or started) latest first; a session with neither time last."""
    tz = datetime.now().astimezone().tzinfo
    floor = datetime.min.replace(tzinfo=tz)

    def key(info: SessionInfo) -> datetime:
        return _moment(info.last_updated or info.start_time, tz) or floor

    return sorted(infos, key=key, reverse=True)


def _count(request: Request, name: str) -> int | None:
    raw = _query(request, name)
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise BadRequest(f"{name} must be a whole number of sessions, not {raw[:40]!r}")
    return int(raw)


async def list_saved(request: Request) -> Response:
    agent = _query(request, "agent") or "all"
    project = _query(request, "project")
    since, until = _bounds(request)
    query = _query(request, "q")
    limit, offset = _count(request, "limit"), _count(request, "offset") or 0
    chosen = _sources(request, agent)

    def listing() -> SavedSessions:
        every = [info for home in chosen for info in home.all_sessions()]
        projects = sorted({info.project for info in every if info.project})
        if project is not None:
            # The agent's own matching (a root given as the agent names it, or its folder).
            every = [info for home in chosen for info in home.sessions(project)]
        matching = _newest_first(
            [info for info in every if _within(info, since, until) and _matches(info, query)]
        )
        end = None if limit is None else offset + limit
        return SavedSessions(
            sessions=[json_safe(info) for info in matching[offset:end]],
            total=len(matching),
            offset=offset,
            agents=[SavedAgent(name=name, title=AGENT_NAMES[name]) for name in AGENTS],
            projects=projects,
            unread=_unread(chosen),
        )

    return JsonResponse(await _in_thread(listing))


def _limit(request: Request) -> int:
    raw = _query(request, "limit")
    if raw is None:
        return SEARCH_LIMIT
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= SEARCH_LIMIT:
        raise BadRequest(f"limit must be 1 to {SEARCH_LIMIT}, not {raw[:40]!r}")
    return int(raw)


async def search_saved(request: Request) -> Response:
    """The sessions holding ``text``: each a line of ``gemwire sessions search --json``; the
    search stops at ``limit`` (``more`` says whether it found another)."""
    text = _query(request, "text")
    if text is None:
        raise BadRequest("text is missing: what to look for")
    project = _query(request, "project")
    since, until = _bounds(request)
    limit = _limit(request)
    chosen = _sources(request, _query(request, "agent") or "all")

    # `search` masks the secret values of the server's environment; its token as well.
    token = app_state(request).config.token

    def find() -> SavedSearch:
        hits = search(text, chosen, project=project, since=since, until=until, secrets=[token])
        try:
            found = [
                msgspec.convert(hit.document(), SavedSearchHit)
                for hit in itertools.islice(hits, limit + 1)
            ]
        finally:
            hits.close()  # saves what the search index learnt, in this thread
        return SavedSearch(found[:limit], len(found) > limit, _unread(chosen))

    return JsonResponse(await _in_thread(find))


def _find(home: SessionSource, session_id: str, project: str | None) -> SessionInfo:
    """The session (or subagent) with this id in the agent's listing: never a path."""
    for info in home.sessions(project) if project else home.all_sessions():
        for candidate in (info, *info.subagents):
            if candidate.id == session_id:
                return candidate
    raise SessionNotFound(f"no {home.agent} session {session_id!r}")


def _joined(prefix: bytes, lines: list[bytes], suffix: bytes) -> bytes:
    return prefix + b",".join(line.rstrip(b"\n") for line in lines) + suffix


async def read_saved(request: Request) -> Response:
    agent = request.path_params["agent"]
    session_id = request.path_params["session_id"]
    fmt = _query(request, "format", SAVED_FORMATS) or "events"
    project = _query(request, "project")
    redact = _query(request, "redact", ("true", "false")) == "true"
    if "\0" in session_id or "\0" in agent:
        raise BadRequest("the path holds a NUL byte")
    if len(session_id) > MAX_ID:
        raise NotFound(f"no {agent} session: the id is over {MAX_ID} characters")
    try:
        home = source(agent, app_state(request).config.sessions_home)
    except InvalidOptions as exc:
        raise NotFound(str(exc)) from exc

    def read() -> tuple[SessionInfo, list[bytes]]:
        info = _find(home, session_id, project)
        conversation = home.load(info.path, keep_originals=fmt == "json")
        export = "claude" if fmt == "json" else fmt
        lines = export_lines(conversation, export, cwd=info.project, redact=redact)  # type: ignore[arg-type]
        return info, list(lines)

    try:
        info, lines = await _in_thread(read)
    except SessionNotFound as exc:
        raise NotFound(str(exc)) from exc
    except SessionError as exc:
        raise ApiError(str(exc), status=422, kind="unreadable") from exc
    except InvalidOptions as exc:  # a format the agent's sessions cannot be exported in yet
        whose = AGENT_NAMES.get(home.agent, home.agent)
        raise BadRequest(
            f"format={fmt} of a {whose} session is not supported yet "
            "(events, html and markdown are)"
        ) from exc
    if fmt == "events":
        body = _joined(b'{"events":[', lines, b"]}")
        return Response(body, media_type="application/json")
    if fmt == "json":
        head = b'{"session":' + msgspec.json.encode(json_safe(info)) + b',"messages":['
        return Response(_joined(head, lines, b"]}"), media_type="application/json")
    if fmt == "markdown":
        return Response(b"".join(lines), media_type="text/markdown; charset=utf-8")
    headers = {"Content-Security-Policy": TRANSCRIPT_CSP, "X-Content-Type-Options": "nosniff"}
    return Response(b"".join(lines), media_type="text/html; charset=utf-8", headers=headers)


async def usage_report(request: Request) -> Response:
    agent = _query(request, "agent") or "all"
    by = _query(request, "by", GROUPINGS) or "day"
    since, until = _bounds(request)
    project = _query(request, "project")
    chosen = _sources(request, agent)
    report = await _in_thread(
        lambda: usage(chosen, by=by, since=since, until=until, project=project)  # type: ignore[arg-type]
    )
    return JsonResponse(report)


ROUTES: list[BaseRoute] = [
    Route("/v1/saved-sessions", list_saved, methods=["GET"]),
    Route("/v1/saved-sessions/search", search_saved, methods=["GET"]),
    Route("/v1/saved-sessions/{agent}/{session_id}", read_saved, methods=["GET"]),
    Route("/v1/usage", usage_report, methods=["GET"]),
]
