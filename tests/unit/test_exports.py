"""The public members of `gemwire` and `gemwire.runners.acp`: what callers annotate with."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import gemwire
import gemwire.runners.acp

ANNOTATED = {
    "AcpClient",
    "AcpOptions",
    "AcpSession",
    "AcpTurn",
    "AcpTurnResult",
    "Check",
    "PermissionRequest",
    "TerminalRequest",
    "TurnResult",
    "Event",
    "GeminiHome",
    "load_session",
    "run_acp",
    "run_acp_sync",
    "RunResult",
    "GeminiRun",
}


def test_all_is_sorted_and_unique() -> None:
    assert list(gemwire.__all__) == sorted(set(gemwire.__all__))
    assert len(gemwire.runners.acp.__all__) == len(set(gemwire.runners.acp.__all__))


@pytest.mark.parametrize("name", sorted(gemwire.__all__))
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(gemwire, name) is not None
    assert name in dir(gemwire)


def test_what_callers_annotate_with_is_exported() -> None:
    assert set(gemwire.__all__) >= ANNOTATED


def test_the_type_checking_imports_match_the_lazy_table() -> None:
    tree = ast.parse(Path(inspect.getfile(gemwire)).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))
    imported = {
        (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    lazy = {(module, name) for module, names in gemwire._LAZY_EXPORTS.items() for name in names}
    assert imported == lazy


@pytest.mark.parametrize("name", sorted(gemwire.runners.acp.__all__))
def test_acp_exports_are_the_module_members(name: str) -> None:
    value = getattr(gemwire.runners.acp, name)
    module = getattr(value, "__module__", None)
    if module is not None and module.startswith("gemwire."):
        assert getattr(importlib.import_module(module), name) is value


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        gemwire.nope  # noqa: B018
