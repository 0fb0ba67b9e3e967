"""The base of every ACP type: upstream's camelCase names, and ``_meta`` on each."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ("AcpStruct",)


class AcpStruct(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    rename="camel",
    omit_defaults=True,
    repr_omit_defaults=True,
):
    meta: dict[str, object] | UnsetType = msgspec.field(default=UNSET, name="_meta")
