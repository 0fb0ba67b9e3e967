"""`lenient`: a message part (a result, an update, a request's params) that does not fit its
type, with its malformed optional parts dropped.

Peers are lax where the schema marks a part optional: qwen serve 0.24.4 answers
``session/new`` with ``models.availableModels: [{"id": ...}]`` (no ``modelId``), and both
ACP SDKs carry on. A malformed optional part is dropped (the caller reports each as a
notice) and the rest decoded strictly: a required field that does not fit still fails
the whole result, and a list's items are dropped only where the list itself is optional.

    >>> from gemwire.wire.acp.sessions import NewSessionResponse
    >>> answer = b'{"sessionId":"s","models":{"currentModelId":"q","availableModels":[{"id":"q"}]}}'
    >>> lenient(NewSessionResponse, answer)
    (b'{"sessionId":"s","models":{"currentModelId":"q","availableModels":[]}}', ['$.models.availableModels[0]'])
    >>> lenient(NewSessionResponse, b'{"sessionId":7}') is None  # a required field stays strict
    True
"""

from __future__ import annotations

import types
from typing import Union, get_args, get_origin

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE

__all__ = ("lenient",)


def lenient(result_type: object, data: bytes) -> tuple[bytes, list[str]] | None:
    """``data`` with the optional parts that do not fit ``result_type`` dropped (so that
    it decodes as one), and the paths dropped (``$.models.availableModels[0]``); ``None``
    when it still does not fit."""
    try:
        value = msgspec.json.decode(data)
    except UNDECODABLE:
        return None
    dropped: list[str] = []
    fitted = _fit(result_type, value, "$", dropped, optional=False)
    if not _fits(result_type, fitted):
        return None
    return msgspec.json.encode(fitted), dropped


def _fit(typ: object, value: object, path: str, dropped: list[str], *, optional: bool) -> object:
    typ = _present(typ)
    if isinstance(typ, type) and issubclass(typ, msgspec.Struct) and isinstance(value, dict):
        fitted = dict(value)
        for field in msgspec.structs.fields(typ):
            name = field.encode_name
            if name not in fitted:
                continue
            here = f"{path}.{name}"
            part = _fit(field.type, fitted[name], here, dropped, optional=not field.required)
            if field.required or _fits(field.type, part):
                fitted[name] = part
            else:
                dropped.append(here)
                del fitted[name]
        return fitted
    if get_origin(typ) is list and isinstance(value, list) and optional:
        (item_type,) = get_args(typ)
        kept = []
        for i, item in enumerate(value):
            part = _fit(item_type, item, f"{path}[{i}]", dropped, optional=False)
            if _fits(item_type, part):
                kept.append(part)
            else:
                dropped.append(f"{path}[{i}]")
        return kept
    return value


def _present(typ: object) -> object:
    """``X`` of ``X | None`` (a part that is there is an ``X``), else ``typ``."""
    if get_origin(typ) in (Union, types.UnionType):
        others = [t for t in get_args(typ) if t is not type(None)]
        if len(others) == 1:
            return others[0]
    return typ


def _fits(typ: object, value: object) -> bool:
    try:
        msgspec.convert(value, typ)
    except msgspec.ValidationError:
        return False
    return True
