"""Every text field of every event goes through the masker: an event type or field added
later that carries a string is masked, or named here as an identifier, or this fails.

(`masking.TEXT_FIELDS` lists the fields to mask: a field it does not name is shown as it
is. This test closes that: each event is built with a secret in every string it can hold,
masked, and the secret may only remain in the identifiers below.)"""

from __future__ import annotations

from typing import Any, get_args

import msgspec
import msgspec.inspect as mi
import pytest

from gemwire._normalize.masking import Masker
from gemwire.events import Event

SECRET = "sk-secret-0123456789"

COMMON = {"agent", "session_id", "parent_call_id"}
"""Names and ids every event has."""
IDENTIFIERS: dict[str, set[str]] = {
    "SessionStarted": {"model", "cwd", "agent_version"},
    "ToolCallStarted": {"call_id", "name", "locations", "mcp_server", "mcp_tool"},
    "ToolCallUpdated": {"call_id"},
    "ToolCallFinished": {"call_id"},
    "FileChanged": {"path", "call_id"},
    # The options' names are the agent's words, but their ids must come back as they were
    # sent (a masked id could not be chosen): left as they are.
    "PermissionRequested": {"request_id", "call_id", "options"},
    "PermissionResolved": {"request_id", "call_id", "option_id"},
    "SessionUpdated": {"update"},
    "PlanUpdated": {"plan_id", "uri"},
    "PlanRemoved": {"plan_id"},
    "SubagentUpdated": {"child_session_id", "state", "stop_reason"},
    "SessionMessage": {"message_id", "sender_session_id", "recipient_session_id"},
    "AuthStatus": {"kind"},
    "TurnCompleted": {"agent_cost"},  # its currency's code
    "Unknown": {"upstream_type"},
}
"""Per event type, the fields besides `COMMON` that are names, ids or paths."""


def holding_the_secret(info: Any) -> Any:
    """A value of type ``info`` with the secret in every string it can hold."""
    if isinstance(info, mi.StrType):
        return f"before {SECRET} after"
    if isinstance(info, mi.IntType | mi.FloatType):
        return 1
    if isinstance(info, mi.BoolType):
        return True
    if isinstance(info, mi.NoneType):
        return None
    if isinstance(info, mi.AnyType):
        return {"key": [f"in {SECRET}"]}
    if isinstance(info, mi.LiteralType):
        return info.values[0]
    if isinstance(info, mi.UnionType):
        chosen = [t for t in info.types if not isinstance(t, mi.NoneType | mi.CustomType)]
        return holding_the_secret(chosen[0])
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return [holding_the_secret(info.item_type)]
    if isinstance(info, mi.DictType):
        return {"key": holding_the_secret(info.value_type)}
    if isinstance(info, mi.StructType):
        return {field.encode_name: holding_the_secret(field.type) for field in info.fields}
    raise AssertionError(f"an event field of a type this test does not know: {info}")


EVENT_UNION = mi.type_info(Event)
assert isinstance(EVENT_UNION, mi.UnionType)
EVENT_TYPES = [info for info in EVENT_UNION.types if isinstance(info, mi.StructType)]


@pytest.mark.parametrize("info", EVENT_TYPES, ids=lambda info: info.cls.__name__)
def test_every_string_of_the_event_is_masked_or_an_identifier(info: mi.StructType) -> None:
    document = holding_the_secret(info)
    document["type"] = info.tag
    event = msgspec.convert(document, Event)
    masked = msgspec.to_builtins(Masker([SECRET]).event(event))
    left = {name for name, value in masked.items() if SECRET in msgspec.json.encode(value).decode()}
    name = info.cls.__name__
    assert left - COMMON == IDENTIFIERS.get(name, set()), name


def test_every_event_type_is_checked() -> None:
    names = {info.cls.__name__ for info in EVENT_TYPES}
    assert set(IDENTIFIERS) <= names
    assert names == {kind.__name__ for kind in get_args(Event)}
