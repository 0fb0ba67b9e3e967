"""One session on a server, with the shapes of `AcpSession`: ``prompt`` → a turn of
`Event` objects, ``cancel``, ``set_mode``, ``set_model``, ``set_config_option``; and
``close``, which ends it on the server (its log stays there)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from gemwire.errors import RemoteError
from gemwire.remote.models import RemoteSessionInfo
from gemwire.remote.turn import RemoteTurn
from gemwire.runners.acp import PermissionHandler, Prompt
from gemwire.serve_api import Cancelled, ConfigBody, ModeBody, ModelBody, PromptBody

if TYPE_CHECKING:
    from gemwire.remote.api import ApiClient
    from gemwire.remote.server import RemoteServer

__all__ = ("RemoteSession", "session_path")


def session_path(session_id: str) -> str:
    """A session's route; the id quoted, so that it can only name a session.

    >>> session_path("s_0123"), session_path("../agents")
    ('/v1/sessions/s_0123', '/v1/sessions/..%2Fagents')
    """
    return f"/v1/sessions/{quote(session_id, safe='')}"


class RemoteSession:
    """A session of a `RemoteServer` (from ``new_session`` or ``session``).

    ``id`` is the server's id of it; ``session_id`` the agent's (as in the events and in
    `AcpSession`). ``info`` is what the server last said about it. Without a
    ``permission_handler`` the session's preset on the server answers the agent's
    permission requests (or a client that has one, e.g. the web page).
    """

    def __init__(
        self,
        server: RemoteServer,
        info: RemoteSessionInfo,
        *,
        permission_handler: PermissionHandler | None,
        seen: int,
    ) -> None:
        self.server = server
        self.info = info
        self.permission_handler = permission_handler
        self.seen = seen
        """The last seq this client has read: the next turn's events start after it
        (a new session's first turn begins with its ``session_started``, as locally)."""
        self.cancel_asked = False
        """This client asked to cancel the running turn (a turn cancelled otherwise may
        have been stopped by the server: `RemoteTurn`)."""

    @property
    def api(self) -> ApiClient:
        return self.server.api

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def session_id(self) -> str | None:
        return self.info.agent_session_id

    @property
    def cwd(self) -> str:
        return self.info.cwd

    @property
    def path(self) -> str:
        return session_path(self.info.id)

    @property
    def current_mode_id(self) -> str | None:
        return self.info.current_mode

    def prompt(self, prompt: Prompt) -> RemoteTurn:
        """A turn: use it with ``async with``, iterate it for events, then read
        ``result`` (or ``await turn.wait()``). One turn at a time per session (another
        one running on the server: `RemoteError` kind ``conflict``)."""
        body = (
            PromptBody(text=prompt) if isinstance(prompt, str) else PromptBody(prompt=list(prompt))
        )
        return RemoteTurn(self, body)

    async def refresh(self) -> RemoteSessionInfo:
        """What the server says about the session now (also kept as ``info``)."""
        self.info = await self.api.call("GET", self.path, RemoteSessionInfo)
        return self.info

    async def cancel(self) -> bool:
        """Cancel the running turn: it ends with stop reason ``cancelled``. Without a
        running turn, nothing; whether one ran on the server."""
        self.cancel_asked = True
        try:
            await self.api.call("POST", f"{self.path}/cancel", Cancelled)
        except RemoteError as exc:
            if exc.kind != "conflict":  # conflict: no turn runs
                raise
            return False
        return True

    async def set_mode(self, mode_id: str) -> None:
        """Set the session's mode; `RemoteError` (``bad_request``) if the agent did not
        announce it."""
        await self._set("mode", ModeBody(mode_id=mode_id))

    async def set_model(self, model_id: str) -> None:
        """Choose the model (``session/set_model``, or the agent's model config option)."""
        await self._set("model", ModelBody(model_id=model_id))

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """Set one of the agent's config options: a value id, or a boolean for a
        ``type: "boolean"`` option."""
        await self._set("config", ConfigBody(config_id=config_id, value=value))

    async def close(self) -> None:
        """End the session on the server: its agent stops; its log stays (``closed``)."""
        self.info = await self.api.call("DELETE", self.path, RemoteSessionInfo)

    async def _set(self, what: str, body: ModeBody | ModelBody | ConfigBody) -> None:
        self.info = await self.api.call("POST", f"{self.path}/{what}", RemoteSessionInfo, json=body)
