"""Real answers checked against docs/openapi.json: `Checked` sends a request to a running
app and checks its status is one the document lists for the operation, and its JSON valid
against the schema it gives; `check` one value against a named component."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from jsonschema import Draft202012Validator

from kit.server import Served

__all__ = ("DOCUMENT", "Checked", "check", "operations_tagged")

DOCUMENT: dict[str, Any] = json.loads(
    (Path(__file__).parents[2] / "docs" / "openapi.json").read_text()
)


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    # The document's components beside the schema: its "#/components/..." refs resolve.
    return Draft202012Validator({**schema, "components": DOCUMENT["components"]})


def _operation(method: str, path: str) -> tuple[str, dict[str, Any]]:
    for template, operations in DOCUMENT["paths"].items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path) and method.lower() in operations:
            return f"{method} {template}", operations[method.lower()]
    raise AssertionError(f"{method} {path} is in no operation of the document")


def operations_tagged(tag: str) -> set[str]:
    """``METHOD template`` of every operation with ``tag``."""
    return {
        f"{method.upper()} {template}"
        for template, operations in DOCUMENT["paths"].items()
        for method, operation in operations.items()
        if tag in operation["tags"]
    }


class Checked:
    """The app, each answer checked against the document as it comes; ``seen`` the
    operations asked."""

    def __init__(self, server: Served) -> None:
        self.server = server
        self.seen: set[str] = set()

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = await self.server.request(method, path, **kwargs)
        name, operation = _operation(method, path.partition("?")[0])
        self.seen.add(name)
        documented = operation["responses"].get(str(response.status_code))
        assert documented is not None, f"{name} answered {response.status_code}: undocumented"
        content = documented.get("content", {})
        media = response.headers["content-type"].partition(";")[0]
        assert media in content, f"{name} {response.status_code}: {media} is not documented"
        if media == "application/json":
            errors = list(_validator(content[media]["schema"]).iter_errors(response.json()))
            assert not errors, f"{name} {response.status_code}: {errors[0].message}"
        return response


def check(name: str, value: Any) -> None:
    """``value`` is valid against the document's schema ``name``."""
    errors = list(_validator({"$ref": f"#/components/schemas/{name}"}).iter_errors(value))
    assert not errors, f"{name}: {errors[0].message} in {value}"
