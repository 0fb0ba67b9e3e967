"""Hypothesis strategies for the wire types: any value of a msgspec type, as JSON data.

`of_type` walks a type as msgspec sees it (structs by their fields, tagged ones with their
tag, unions, literals, lists, dicts) and draws JSON only: an open ``object`` field holds
small JSON values, never the arbitrary Python objects ``st.from_type`` would make of it.
An optional field is left out or drawn; what is drawn is what an agent may send.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Literal, Union, get_args, get_origin

import msgspec
from hypothesis import strategies as st

__all__ = ("json_values", "of_type")

_text = st.text(st.characters(codec="utf-8"), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
"""Small JSON values (finite numbers only: integers)."""


def of_type(typ: object) -> st.SearchStrategy[object]:
    """JSON data that decodes as ``typ``."""
    origin = get_origin(typ)
    if origin is Annotated:  # constraints for msgspec (a JSON schema): the type itself
        return of_type(get_args(typ)[0])
    if origin in (Union, types.UnionType):
        options = [t for t in get_args(typ) if t is not msgspec.UnsetType]
        return st.one_of([of_type(t) for t in options])
    if origin is Literal:
        return st.sampled_from(get_args(typ))
    if origin is list:
        (item,) = get_args(typ)
        return st.lists(of_type(item), max_size=2)
    if origin is dict:
        _, value = get_args(typ)
        return st.dictionaries(_text, of_type(value), max_size=2)
    if isinstance(typ, type) and issubclass(typ, msgspec.Struct):
        return _struct(typ)
    simple: dict[object, st.SearchStrategy[object]] = {
        str: _text,
        int: st.integers(0, 2**31),
        float: st.integers(0, 2**31).map(float),
        bool: st.booleans(),
        type(None): st.none(),
        object: json_values,
    }
    return simple[typ]


def _struct(typ: type[msgspec.Struct]) -> st.SearchStrategy[object]:
    config = typ.__struct_config__
    required: dict[str, st.SearchStrategy[object]] = {}
    optional: dict[str, st.SearchStrategy[object]] = {}
    if config.tag is not None:
        required[str(config.tag_field)] = st.just(config.tag)
    for field in msgspec.structs.fields(typ):
        part = _deferred(field.type)  # a type may hold itself (content in content)
        if field.required:
            required[field.encode_name] = part
        else:  # a field at its default is not sent (``omit_defaults``): draw another
            optional[field.encode_name] = part.filter(_other_than(_default(field)))
    return st.fixed_dictionaries(required, optional=optional)


def _default(field: msgspec.structs.FieldInfo) -> object:
    """The field's default as JSON (``UNSET``: no value is it)."""
    if field.default_factory is not msgspec.NODEFAULT:
        return msgspec.to_builtins(field.default_factory())
    return field.default if field.default is msgspec.UNSET else msgspec.to_builtins(field.default)


def _deferred(typ: object) -> st.SearchStrategy[object]:
    return st.deferred(lambda: of_type(typ))


def _other_than(default: object) -> Callable[[object], bool]:
    return lambda value: value != default
