"""`GeminiCliProvider`'s config: ADR-0014's keys into `GeminiOptions` (no process started;
tests/e2e/test_runner.py runs the provider against the real CLI)."""

from __future__ import annotations

import pytest

from gemwire.adapters import GeminiCliProvider
from gemwire.errors import GemwireError
from gemwire.runners.gemini_options import GeminiOptions


def test_the_config_becomes_gemini_options() -> None:
    # GeminiOptions as a whole cannot be decoded (its mcp_servers are an untagged union):
    # this raised TypeError while the config was converted into it directly.
    provider = GeminiCliProvider(
        {"model": "flash", "working_dir": "/repo", "timeout": 600, "allowed_tools": ["ls"]}
    )
    assert provider.options == GeminiOptions(
        model="flash", cwd="/repo", timeout=600, allowed_tools=("ls",), approval_mode="yolo"
    )
    assert GeminiCliProvider().options == GeminiOptions(approval_mode="yolo")
    assert GeminiCliProvider({"approval_mode": "default"}).options.approval_mode == "default"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"budget": 1}, r"unknown config key\(s\) \['budget'\]; known: model, sandbox, "),
        (
            {"timeout": "soon"},
            r"invalid config: Expected `float \| null`, got `str` - at `\$.timeout`",
        ),
        (
            {"approval_mode": "always"},
            r"invalid config: Invalid enum value 'always' - at `\$.approval_mode`",
        ),
    ],
)
def test_a_bad_config_is_a_gemwire_error(config: dict[str, object], message: str) -> None:
    with pytest.raises(GemwireError, match=f"^{message}"):
        GeminiCliProvider(config)
