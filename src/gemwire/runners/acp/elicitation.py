"""Answering an agent's ``elicitation/create``: a callback for interactive hosts, a decline for
headless ones.

An `ElicitationHandler` gets an `ElicitationRequest` (a form to fill in, or a URL to visit)
and returns an `ElicitationAnswer`: ``accept`` (with the form's values), ``decline`` or
``cancel``. The client declares the ``elicitation`` capability only when it is given a
handler; an agent that asks anyway is declined (`decline_elicitation`, the headless
default). Whatever a handler returns, only the fields the form asked for are sent, and an
accepted form missing a required field, or a handler that raises, is a decline.

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        if request.mode == "url":
            print(f"{request.message}: open {request.url}")
            return ElicitationAnswer(action="accept")
        values = {name: input(f"{name}: ") for name in request.fields}
        return ElicitationAnswer(action="accept", content=values)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

import msgspec

from gemwire.wire import acp

__all__ = (
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "checked_answer",
    "decline_elicitation",
)


class ElicitationRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What an agent asks the user for, as a host shows it to a person."""

    request_id: str
    session_id: str | None
    """``None``: asked outside any session (while authenticating, say)."""
    mode: Literal["form", "url"]
    message: str
    fields: dict[str, dict[str, Any]] = {}
    """``form``: each field's JSON Schema (``type``, ``title``, ``enum``, ...), by name."""
    required: list[str] = []
    """``form``: the fields an accepted answer must fill in."""
    url: str | None = None
    """``url``: where to send the user."""
    tool_call_id: str | None = None


class ElicitationAnswer(msgspec.Struct, frozen=True, kw_only=True):
    action: acp.ElicitationAction
    content: dict[str, Any] | None = None
    """``accept`` of a form: the values (strings, numbers, booleans, lists of strings)."""


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]


async def decline_elicitation(request: ElicitationRequest) -> ElicitationAnswer:
    """The headless default: nobody is there to answer."""
    return ElicitationAnswer(action="decline")


_VALUE_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
}


def checked_answer(request: ElicitationRequest, answer: ElicitationAnswer) -> ElicitationAnswer:
    """``answer`` as it may be sent: an accepted form keeps only the fields asked for, and
    is a decline if a required one is missing or a value is not of its field's type.

    >>> form = ElicitationRequest(
    ...     request_id="1", session_id="s", mode="form", message="Name?",
    ...     fields={"name": {"type": "string"}, "age": {"type": "integer"}}, required=["name"],
    ... )
    >>> checked_answer(form, ElicitationAnswer(action="accept", content={"name": "Ada", "x": 1}))
    ElicitationAnswer(action='accept', content={'name': 'Ada'})
    >>> checked_answer(form, ElicitationAnswer(action="accept", content={"age": 36})).action
    'decline'
    """
    if answer.action != "accept" or request.mode != "form":
        return ElicitationAnswer(action=answer.action)
    content = {k: v for k, v in (answer.content or {}).items() if k in request.fields}
    for name, value in content.items():
        types = _VALUE_TYPES.get(str(request.fields[name].get("type")), ())
        if not isinstance(value, types) or (bool in types) != isinstance(value, bool):
            return ElicitationAnswer(action="decline")
    if any(name not in content for name in request.required):
        return ElicitationAnswer(action="decline")
    return ElicitationAnswer(action="accept", content=content)
