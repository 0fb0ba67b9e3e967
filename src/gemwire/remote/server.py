"""`connect`: a `gemwire serve` server, driven with the shapes of the local API.

    async with connect("http://127.0.0.1:8765", token=token) as server:
        session = await server.new_session("gemini", cwd="/srv/project")
        async with session.prompt("fix the failing test") as turn:
            async for event in turn:
                print(event.type)
        print(turn.result.answer)

The URL the server prints at start (``http://HOST:PORT/?token=TOKEN``) works as it is.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self, cast
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire.errors import sole_exception
from gemwire.events import Event
from gemwire.remote._extra import httpx
from gemwire.remote.api import ApiClient, Reconnect
from gemwire.remote.models import RemoteAgent, RemoteSessionInfo, decode_envelope
from gemwire.remote.session import RemoteSession, session_path
from gemwire.runners.acp import PermissionHandler
from gemwire.serve_api import NewSession, Permissions, Roots, SavedEvents, SavedSessions, Sessions
from gemwire.sessions import SessionInfo, UsageReport

__all__ = ("RemoteServer", "connect")

_TIMEOUT = httpx.Timeout(30.0, read=60.0)
"""A stream sends a keep-alive every 15 s: a minute of silence is a dead connection."""


class _Events(msgspec.Struct):
    events: list[msgspec.Raw]
    last_seq: int


class RemoteServer:
    """A connection to one server (from `connect`); use it with ``async with``. Its task
    group runs each turn's stream reader and permission handlers."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        reconnect: Reconnect | None = None,
    ) -> None:
        base, given = _split_token(url)
        token = token or given
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = base
        self.api = ApiClient(
            httpx.AsyncClient(
                base_url=base, headers=headers, transport=transport, timeout=_TIMEOUT
            ),
            reconnect or Reconnect(),
        )
        self._task_group: TaskGroup | None = None

    @property
    def task_group(self) -> TaskGroup:
        if self._task_group is None:
            raise RuntimeError("use the server with `async with` first")
        return self._task_group

    async def __aenter__(self) -> Self:
        await self.api.http.__aenter__()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        try:
            await self._task_group.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # anyio groups what the task group saw; one error comes out as itself.
            single = sole_exception(group)
            if single is None:
                raise
            if single is not exc:
                raise single from None
        finally:
            self._task_group = None
            await self.api.http.__aexit__(exc_type, exc, tb)

    async def agents(self) -> list[RemoteAgent]:
        """The agents the server offers, available or not."""
        return await self.api.call("GET", "/v1/agents", list[RemoteAgent])

    async def roots(self) -> list[str]:
        """The folders sessions may work in (the first is the default ``cwd``)."""
        return (await self.api.call("GET", "/v1/roots", Roots)).roots

    async def new_session(
        self,
        agent: str = "gemini",
        *,
        cwd: str | None = None,
        model: str | None = None,
        mode: str | None = None,
        permissions: str | None = None,
        permission_handler: PermissionHandler | None = None,
    ) -> RemoteSession:
        """Start a session of ``agent`` in ``cwd`` (a folder under one of the server's
        roots; default: the first root). ``permissions`` is the session's preset on the
        server (``ask``, ``deny``, ``reads``, ``edits``, ``all``); with a
        ``permission_handler`` it defaults to ``ask`` (the handler answers), else to
        ``deny``, as locally."""
        body = NewSession(
            agent=agent,
            cwd=cwd,
            model=model,
            mode=mode,
            # Checked by the server (a preset it does not know: `RemoteError` bad_request).
            permissions=cast(
                "Permissions",
                permissions or ("ask" if permission_handler is not None else "deny"),
            ),
        )
        info = await self.api.call("POST", "/v1/sessions", RemoteSessionInfo, json=body)
        return RemoteSession(self, info, permission_handler=permission_handler, seen=0)

    async def sessions(self) -> list[RemoteSessionInfo]:
        """Every session of the server: live ones and those in its state folder."""
        return (await self.api.call("GET", "/v1/sessions", Sessions)).sessions

    async def session(
        self, session_id: str, *, permission_handler: PermissionHandler | None = None
    ) -> RemoteSession:
        """Attach to an existing session by its server id: the next turn's events start
        after what the session has logged so far (`history` has those)."""
        info = await self.api.call("GET", session_path(session_id), RemoteSessionInfo)
        return RemoteSession(self, info, permission_handler=permission_handler, seen=info.last_seq)

    async def history(self, session_id: str, *, after: int = 0) -> list[Event]:
        """Every event a session has logged after seq ``after``, page by page."""
        path = f"{session_path(session_id)}/events"
        events: list[Event] = []
        while True:
            page = await self.api.call(
                "GET", path, _Events, params={"after": str(after)}, headers=_JSON
            )
            envelopes = [decode_envelope(raw) for raw in page.events]
            events += [e.event for e in envelopes if e.event is not None]
            if not envelopes or envelopes[-1].seq >= page.last_seq:
                return events
            after = envelopes[-1].seq

    async def saved_sessions(
        self,
        agent: str = "all",
        *,
        project: str | None = None,
        since: str | None = None,
        until: str | None = None,
        q: str | None = None,
    ) -> list[SessionInfo]:
        """The agents' saved sessions in the server's homes, newest first, each as ``gemwire
        sessions list --json`` gives it: of ``agent`` (or ``all``), in ``project``, last
        updated between ``since`` and ``until`` (as ``gemwire usage`` takes them), matching
        ``q``. Every one of them: the server's pages (``limit``, ``offset``) are for the page."""
        given = {"agent": agent, "project": project, "since": since, "until": until, "q": q}
        params = {name: value for name, value in given.items() if value is not None}
        return (
            await self.api.call("GET", "/v1/saved-sessions", SavedSessions, params=params)
        ).sessions

    async def saved_session(
        self, agent: str, session_id: str, *, project: str | None = None
    ) -> list[Event]:
        """A saved session's events (``gemwire sessions show --json``)."""
        path = f"/v1/saved-sessions/{quote(agent, safe='')}/{quote(session_id, safe='')}"
        params = {"format": "events", **({"project": project} if project else {})}
        document = await self.api.call("GET", path, SavedEvents, params=params)
        return document.events

    async def usage(
        self,
        agent: str = "all",
        *,
        by: str = "day",
        since: str | None = None,
        until: str | None = None,
        project: str | None = None,
    ) -> UsageReport:
        """Tokens and estimated cost of the saved sessions, as ``gemwire usage --json``."""
        given = {"agent": agent, "by": by, "since": since, "until": until, "project": project}
        params = {name: value for name, value in given.items() if value is not None}
        return await self.api.call("GET", "/v1/usage", UsageReport, params=params)


def connect(
    url: str,
    *,
    token: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    reconnect: Reconnect | None = None,
) -> RemoteServer:
    """A `RemoteServer` for ``url``; use it with ``async with``. ``token`` is the
    server's (else the ``?token=`` of ``url``); ``transport`` replaces httpx's (an app in
    this process, a Unix socket); ``reconnect`` says how a dropped stream is reopened."""
    return RemoteServer(url, token=token, transport=transport, reconnect=reconnect)


_JSON = {"Accept": "application/json"}


def _split_token(url: str) -> tuple[str, str | None]:
    """The URL without its query, and the ``token`` it carries.

    >>> _split_token("http://127.0.0.1:8765/?token=abc")
    ('http://127.0.0.1:8765', 'abc')
    >>> _split_token("https://build.example/gemwire/")
    ('https://build.example/gemwire', None)
    """
    parts = urlsplit(url)
    token = parse_qs(parts.query).get("token", [None])[-1]
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", "")), token
