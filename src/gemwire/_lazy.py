"""A package's names imported from their modules on first use (PEP 562).

``gemwire`` exports names whose modules pull in anyio, the transport and the whole protocol
stack; imported eagerly, every ``import gemwire`` (and so ``gemwire --help`` and ``gemwire
replay``) would pay for all of it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ("lazy_exports",)


def lazy_exports(
    namespace: dict[str, Any], exports: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package whose ``globals()`` is
    ``namespace``, for ``exports`` (module -> the names it gives). A name imported once is
    kept in ``namespace``."""
    modules = {name: module for module, names in exports.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(modules[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *modules})

    return __getattr__, __dir__
