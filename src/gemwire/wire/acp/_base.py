"""The base of every ACP type: upstream's camelCase names, and ``_meta`` on each."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ("AcpStruct", "JsonValue")

JsonValue = Annotated[object, msgspec.Meta(extra_json_schema={"description": "any JSON value"})]
"""Any JSON value, where the schema leaves a value open (``_meta``, ``rawInput``, a config
option as sent): a consumer narrows it before use. (Its JSON schema is ``{}``, any value.)"""


class AcpStruct(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    rename="camel",
    omit_defaults=True,
    repr_omit_defaults=True,
):
    meta: dict[str, JsonValue] | UnsetType = msgspec.field(default=UNSET, name="_meta")
