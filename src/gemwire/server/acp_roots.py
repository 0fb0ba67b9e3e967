"""`SessionFolders`: the folders an ACP client names for a session, held to the server's roots.

A client of the ACP endpoint names the folders its sessions work in: ``cwd`` and
``additionalDirectories`` of ``session/new``, ``session/load``, ``session/resume`` and
``session/fork``, and the ``cwd`` that filters ``session/list``. Each must be an absolute
path to a folder under one of the roots, by real path (`confine`: ``..`` and symlinks
resolved), as a workspace of the API must; a session opened with no ``cwd`` is in the
first root, as an API session with no workspace is. A message naming one that is not never reaches
the agent: the client gets a JSON-RPC error instead (invalid params, -32602, the field and
the path named). A message whose folders pass reaches the agent with each folder as its
real path, so the agent works where the check looked, whatever a symlink points to later
or however the agent joins ``..``; the message is encoded anew (one value a key, as checked).
Every other message passes as it came.

    >>> import tempfile
    >>> root = os.path.realpath(tempfile.mkdtemp())
    >>> folders = SessionFolders((root,))
    >>> message = b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}'
    >>> refused = folders.check(message)
    >>> msgspec.json.decode(refused.answer)["error"]["message"]  # doctest: +ELLIPSIS
    "Invalid params: cwd '/' is outside the server's roots (...): a session's folders must lie under one of them, symlinks resolved"
    >>> folders.check(b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}')
    b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}'
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import msgspec

from gemwire.protocol.acp.remote import invalid_params
from gemwire.server.paths import confine
from gemwire.server.responses import ApiError, Forbidden
from gemwire.wire.acp.methods import AGENT_METHODS

__all__ = ("Refused", "SessionFolders")

# The methods that open a session in a folder (cwd required), and the one whose cwd filters.
_OPENING = frozenset(
    AGENT_METHODS[name]
    for name in ("session_new", "session_load", "session_resume", "session_fork")
)
_FILTERING = frozenset({AGENT_METHODS["session_list"]})
_RULE = "a session's folders must lie under one of them, symlinks resolved"


class _Method(msgspec.Struct):
    method: object = None


_method_of = msgspec.json.Decoder(_Method)


class Refused(msgspec.Struct, frozen=True):
    """A message that names a folder it may not: ``answer`` is the client's JSON-RPC error
    (``None`` for a notification, which gets none)."""

    answer: bytes | None


class _Invalid(Exception):
    """Why a message's folders are refused (the text after ``Invalid params:``)."""


class SessionFolders:
    """The check of ``roots`` on what a client sends."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.roots = tuple(os.path.realpath(root) for root in roots)

    def check(self, data: bytes) -> bytes | Refused:
        """``data`` (one JSON object, checked as JSON) as the agent gets it, or why not."""
        method = _method_of.decode(data).method  # the rest skipped: a prompt may be 64 MiB
        if not isinstance(method, str) or (method not in _OPENING and method not in _FILTERING):
            return data  # (a method that is no string is no message: the caller answers it)
        message = msgspec.json.decode(data)
        try:
            message["params"] = self._placed(message.get("params"), required=method in _OPENING)
        except _Invalid as exc:
            key = msgspec.json.encode(message["id"]) if "id" in message else None
            return Refused(None if key is None else invalid_params(key, str(exc)))
        return msgspec.json.encode(message)

    def _placed(self, params: object, *, required: bool) -> dict[str, Any]:
        """``params`` with each folder its real path; `_Invalid` for one that may not be."""
        if not isinstance(params, dict):
            raise _Invalid("params must be an object")
        cwd = params.get("cwd")
        if cwd is not None:
            params["cwd"] = self._real("cwd", cwd)
        elif required:  # as the API's sessions: no folder is the first root
            params["cwd"] = confine(None, self.roots)
        extra = params.get("additionalDirectories")
        if extra is not None:
            if not isinstance(extra, list):
                raise _Invalid("additionalDirectories must be a list of paths")
            params["additionalDirectories"] = [
                self._real(f"additionalDirectories[{i}]", path) for i, path in enumerate(extra)
            ]
        return params

    def _real(self, field: str, path: object) -> str:
        if not isinstance(path, str):
            raise _Invalid(f"{field} must be a string (an absolute path)")
        if not os.path.isabs(path):
            raise _Invalid(f"{field} {path!r} is not an absolute path")
        if "\0" in path:
            raise _Invalid(f"{field} {path!r} holds a NUL byte")
        try:
            return confine(path, self.roots)
        except Forbidden as exc:
            raise _Invalid(f"{field} {exc}: {_RULE}") from exc
        except ApiError as exc:  # missing, not a folder
            raise _Invalid(f"{field} {exc}") from exc
