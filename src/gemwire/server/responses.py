"""JSON in and out: msgspec-encoded responses, request bodies decoded into Structs, and
the one error shape of the API.

Every error is ``{"error": {"kind": ..., "message": ...}}`` with its HTTP status. Route
code raises `ApiError` (or a subclass); the app's handlers turn it, and Starlette's own
404/405, into that shape.

    >>> error_response(NotFound("no session s_1")).body
    b'{"error":{"kind":"not_found","message":"no session s_1"}}'
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from gemwire.errors import GemwireError
from gemwire.protocol._lone_surrogates import repaired
from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.serve_api import ErrorBody, ErrorDetail

__all__ = (
    "ApiError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "JsonResponse",
    "LimitReached",
    "NotFound",
    "TooLarge",
    "Unauthorized",
    "api_error_handler",
    "error_body",
    "error_response",
    "http_exception_handler",
    "lone_surrogates",
    "read_json",
)

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


class JsonResponse(Response):
    """A response whose content msgspec encodes: a `gemwire.serve_api` Struct (or the
    OpenAPI document)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return _encoder.encode(content)


class ApiError(GemwireError):
    """An error the API answers with: ``status``, ``kind`` and a message for people."""

    status = 500
    kind = "internal"

    def __init__(self, message: str, *, status: int | None = None, kind: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        if kind is not None:
            self.kind = kind


class BadRequest(ApiError):
    status, kind = 400, "bad_request"


class Unauthorized(ApiError):
    status, kind = 401, "unauthorized"


class Forbidden(ApiError):
    status, kind = 403, "forbidden"


class NotFound(ApiError):
    status, kind = 404, "not_found"


class Conflict(ApiError):
    status, kind = 409, "conflict"


class TooLarge(ApiError):
    status, kind = 413, "too_large"


class LimitReached(ApiError):
    status, kind = 429, "limit"


def error_body(kind: str, message: str) -> bytes:
    """The JSON of an error (for the middleware, which answers before any route)."""
    return _encoder.encode(ErrorBody(ErrorDetail(kind, message)))


def error_response(error: ApiError) -> JsonResponse:
    return JsonResponse(ErrorBody(ErrorDetail(error.kind, str(error))), error.status)


_HTTP_KINDS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "bad_request",
    409: "conflict",
    413: "too_large",
    429: "limit",
}


async def api_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (an unknown route, a wrong method) in the API's shape."""
    assert isinstance(exc, HTTPException)
    kind = _HTTP_KINDS.get(exc.status_code, "internal")
    body = ErrorBody(ErrorDetail(kind, str(exc.detail)))
    return JsonResponse(body, exc.status_code, exc.headers)


async def read_json(request: Request, into: type[T]) -> T:
    """The request's JSON body as ``into``; `BadRequest` naming what is wrong."""
    body = await request.body()
    try:
        return msgspec.json.decode(body or b"{}", type=into)
    except msgspec.ValidationError as exc:
        raise BadRequest(f"invalid request body: {exc}") from exc
    except UNDECODABLE as exc:  # broken JSON, invalid UTF-8 in a string, nested too deeply
        why = lone_surrogates(body) or f"not JSON: {why_undecodable(exc)}"
        raise BadRequest(f"the request body is {why}") from exc


def lone_surrogates(data: bytes) -> str | None:
    r"""What is wrong with JSON ``data`` that failed to decode, when it is lone UTF-16
    surrogate escapes (msgspec says "Input data was truncated"); else ``None``.

    >>> lone_surrogates(rb'{"text": "\ud83d\ude00 and \ud83d"}')
    'not JSON gemwire can read: it holds 1 lone UTF-16 surrogate (an escape such as \\ud83d without the other half of its pair); send whole characters'
    >>> lone_surrogates(b'{"text": ') is None
    True
    """
    fixed = repaired(data)
    if fixed is None:
        return None
    try:
        msgspec.json.decode(fixed[0])
    except UNDECODABLE:
        return None  # something else is wrong with it too
    count = fixed[1]
    return (
        f"not JSON gemwire can read: it holds {count} lone UTF-16 surrogate"
        f"{'s' if count > 1 else ''} (an escape such as \\ud83d without the other half of "
        "its pair); send whole characters"
    )
