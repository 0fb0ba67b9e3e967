"""Find fields a decoded document has that its msgspec type does not declare.

Production decoding ignores unknown fields (a newer CLI adding one must not break a
run); strict mode reports them, so the tests notice upstream drift. One walk over the
untyped document serves every wire type, instead of a second, strict copy of each class.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from msgspec import inspect

__all__ = ("unknown_fields",)


@functools.cache
def _info(typ: Any) -> inspect.Type:
    return inspect.type_info(typ)


def unknown_fields(document: Any, typ: Any) -> list[str]:
    """JSON paths (``$.stats.models.x.extra``) of fields ``typ`` does not declare."""
    found: list[str] = []
    _walk(document, _info(typ), "$", found)
    return found


def _walk(value: Any, info: inspect.Type, path: str, found: list[str]) -> None:
    if isinstance(info, inspect.UnionType):
        for option in _matching(value, info):
            _walk(value, option, path, found)
    elif isinstance(info, inspect.StructType) and isinstance(value, dict):
        fields = {f.encode_name: f for f in info.fields}
        tag_field = info.tag_field
        for key, item in value.items():
            field = fields.get(key)
            if field is None:
                if key != tag_field:
                    found.append(f"{path}.{key}")
            else:
                _walk(item, field.type, f"{path}.{key}", found)
    elif isinstance(info, inspect.DictType) and isinstance(value, dict):
        for key, item in value.items():
            _walk(item, info.value_type, f"{path}.{key}", found)
    elif isinstance(info, inspect.ListType) and isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, info.item_type, f"{path}[{index}]", found)


def _matching(value: Any, info: inspect.UnionType) -> Sequence[inspect.Type]:
    """The union members a value belongs to (by tag, for tagged unions of Structs)."""
    structs = [t for t in info.types if isinstance(t, inspect.StructType)]
    if not isinstance(value, dict) or not structs:
        return [t for t in info.types if not isinstance(t, inspect.StructType)]
    tagged = [s for s in structs if s.tag_field is not None]
    if tagged:
        return [s for s in tagged if value.get(s.tag_field) == s.tag]
    return structs[:1]
