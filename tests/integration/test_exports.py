"""The public members of `gemwire` and `gemwire.runners.acp`: what callers annotate with."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import gemwire
import gemwire.runners
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


LAZY_PACKAGES = [gemwire]
EXPORTS = [(package, name) for package in LAZY_PACKAGES for name in sorted(package.__all__)]


@pytest.mark.parametrize(("package", "name"), EXPORTS, ids=lambda x: getattr(x, "__name__", x))
def test_every_exported_name_resolves(package: ModuleType, name: str) -> None:
    assert getattr(package, name) is not None
    assert name in dir(package)


def test_what_callers_annotate_with_is_exported() -> None:
    assert set(gemwire.__all__) >= ANNOTATED


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda p: p.__name__)
def test_the_type_checking_imports_match_the_lazy_table(package: ModuleType) -> None:
    tree = ast.parse(Path(inspect.getfile(package)).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))
    imported = {
        (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    lazy = {(module, name) for module, names in package._LAZY_EXPORTS.items() for name in names}
    assert imported == lazy


def test_replaying_imports_no_runner_of_processes() -> None:
    # gemwire replay needs the decoder and the normalizer, not anyio and the transport.
    code = (
        "import sys, gemwire._normalize.gemini_replay; "
        "print(sorted(m for m in ('anyio', 'gemwire._transport', 'gemwire.runners.gemini') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


@pytest.mark.parametrize("name", sorted(gemwire.runners.acp.__all__))
def test_acp_exports_are_the_module_members(name: str) -> None:
    value = getattr(gemwire.runners.acp, name)
    module = getattr(value, "__module__", None)
    if module is not None and module.startswith("gemwire."):
        assert getattr(importlib.import_module(module), name) is value


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        gemwire.nope  # noqa: B018
