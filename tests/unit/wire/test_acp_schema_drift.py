"""Drift between ``gemwire.wire.acp`` and the official ACP schema (tests/fixtures/acp/schema/,
its version in ``VERSION``): every method, capability and session update kind the schema has is
typed in ``wire.acp`` or listed in ``wire/acp/untyped.py`` with the reason, and nothing listed
there is stale (typed after all, or gone from the schema)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Union, get_args, get_origin

import msgspec
import pytest
from kit.corpus import FIXTURES

from gemwire.wire import acp
from gemwire.wire.acp import untyped

SCHEMA_DIR = FIXTURES / "acp" / "schema"
VERSION = (SCHEMA_DIR / "VERSION").read_text().strip()


def _load(name: str) -> Any:
    return json.loads((SCHEMA_DIR / name).read_text())


SCHEMA = _load("schema.unstable.json")
DEFS: dict[str, Any] = SCHEMA["$defs"]


def schema_methods() -> set[str]:
    """Every method of the schema: each request and notification type names its ``x-method``."""
    return {d["x-method"] for d in DEFS.values() if "x-method" in d}


TYPED_METHODS = (
    set(acp.AGENT_METHODS.values())
    | set(acp.CLIENT_METHODS.values())
    | set(acp.PROTOCOL_METHODS.values())
)


def schema_update_kinds() -> set[str]:
    return {
        variant["properties"]["sessionUpdate"]["const"]
        for variant in DEFS["SessionUpdate"]["oneOf"]
    }


def _ref(node: Any) -> str | None:
    """The first ``$ref`` under a property: ``{"$ref"}``, ``allOf``/``anyOf`` with ``null``."""
    if isinstance(node, dict):
        if "$ref" in node:
            return str(node["$ref"]).rsplit("/", 1)[-1]
        for child in node.values():
            found = _ref(child)
            if found is not None:
                return found
    elif isinstance(node, list):
        for child in node:
            found = _ref(child)
            if found is not None:
                return found
    return None


def _struct_in(annotation: Any) -> type[msgspec.Struct] | None:
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return annotation
    if get_origin(annotation) is Union or type(annotation).__name__ == "UnionType":
        for arg in get_args(annotation):
            found = _struct_in(arg)
            if found is not None:
                return found
    return None


def _capability_paths(
    def_name: str, ours: type[msgspec.Struct] | None
) -> Iterator[tuple[str, bool]]:
    """``(path, typed)`` for each capability under ``def_name``, walking our type beside it."""
    fields = {} if ours is None else {f.encode_name: f for f in msgspec.structs.fields(ours)}
    for name, node in DEFS[def_name].get("properties", {}).items():
        if name == "_meta":
            continue
        path = f"{def_name}.{name}"
        field = fields.get(name)
        yield path, field is not None
        child = _ref(node)
        if child is not None and child.endswith("Capabilities"):
            sub = None if field is None else _struct_in(field.type)
            if field is not None and sub is None:
                # Kept as a plain object: typed only while the schema gives it no members.
                yield from ((p, False) for p, _ in _capability_paths(child, None))
            else:
                yield from _capability_paths(child, sub)


def schema_capabilities() -> dict[str, bool]:
    return dict(
        [
            *_capability_paths("ClientCapabilities", acp.ClientCapabilities),
            *_capability_paths("AgentCapabilities", acp.AgentCapabilities),
        ]
    )


def test_the_vendored_schema_is_v1_with_its_version() -> None:
    assert VERSION.startswith("1.")
    assert f"v{VERSION}" == acp.SCHEMA_VERSION  # what gemwire says it follows
    assert DEFS["ProtocolVersion"]["maximum"] == 65535  # v1's schema: a plain number
    assert {"SessionUpdate", "ClientCapabilities", "AgentCapabilities"} <= set(DEFS)


def test_every_method_is_typed_or_listed_as_raw() -> None:
    missing = schema_methods() - TYPED_METHODS - set(untyped.METHODS)
    assert not missing, (
        f"ACP {VERSION} methods neither typed nor listed in untyped.py: {sorted(missing)}"
    )


def test_every_capability_is_typed_or_listed_as_raw() -> None:
    missing = {p for p, typed in schema_capabilities().items() if not typed} - set(
        untyped.CAPABILITIES
    )
    assert not missing, (
        f"ACP {VERSION} capabilities neither typed nor listed in untyped.py: {sorted(missing)}"
    )


def test_every_session_update_kind_is_typed_or_listed_as_raw() -> None:
    missing = schema_update_kinds() - set(acp.SESSION_UPDATE_TYPES) - set(untyped.SESSION_UPDATES)
    assert not missing, (
        f"ACP {VERSION} update kinds neither typed nor listed in untyped.py: {sorted(missing)}"
    )


@pytest.mark.parametrize(
    ("listed", "in_schema", "typed"),
    [
        pytest.param(
            untyped.METHODS,
            schema_methods(),
            TYPED_METHODS,
            id="methods",
        ),
        pytest.param(
            untyped.CAPABILITIES,
            set(schema_capabilities()),
            {p for p, typed in schema_capabilities().items() if typed},
            id="capabilities",
        ),
        pytest.param(
            untyped.SESSION_UPDATES,
            schema_update_kinds(),
            set(acp.SESSION_UPDATE_TYPES),
            id="session_updates",
        ),
    ],
)
def test_nothing_listed_as_raw_is_stale(
    listed: dict[str, str], in_schema: set[str], typed: set[str]
) -> None:
    assert set(listed) <= in_schema, f"not in ACP {VERSION}: {sorted(set(listed) - in_schema)}"
    assert not set(listed) & typed, f"typed after all: {sorted(set(listed) & typed)}"
    assert all(reason.strip() for reason in listed.values())


def test_the_walk_sees_nested_capabilities() -> None:
    """The capability walk reaches the members of nested capability objects, typed or not."""
    capabilities = schema_capabilities()
    assert capabilities["FileSystemCapabilities.readTextFile"] is True
    assert capabilities["SessionCapabilities.resume"] is True
    assert "SessionConfigOptionsCapabilities.boolean" in capabilities
