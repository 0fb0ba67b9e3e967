"""The ``ResponseProvider`` shape of ADR-0014 (seed 003), as a thin adapter over `run_gemini`.

provider = GeminiCliProvider({"model": "flash", "working_dir": "/repo", "timeout": 600})
provider.validate()
result = provider.generate("fix the failing test")
result.response, result.files        # answer text; {path: None} of files written
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from gemwire.errors import GemwireError
from gemwire.runners.discovery import find_gemini
from gemwire.runners.gemini import run_gemini_sync
from gemwire.runners.gemini_options import GeminiOptions

__all__ = ("GeminiCliProvider", "ProviderResult")


class ProviderResult(msgspec.Struct, frozen=True, kw_only=True):
    response: str
    files: dict[str, None]
    """Files written or edited by successful tool calls, in order (absolute paths)."""


class GeminiCliProvider:
    """Gemini CLI as a response provider. Failures raise gemwire's `RunFailed` subclasses."""

    CONFIG_KEYS: ClassVar[tuple[str, ...]] = (
        "model",
        "sandbox",
        "approval_mode",
        "include_directories",
        "allowed_tools",
        "working_dir",
        "timeout",
        "executable",
    )

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = dict(config or {})
        unknown = sorted(set(config) - set(self.CONFIG_KEYS))
        if unknown:
            raise GemwireError(
                f"unknown config key(s) {unknown}; known: {', '.join(self.CONFIG_KEYS)}"
            )
        try:
            self.options = msgspec.convert(
                {
                    # The provider writes files (fs_ability local-write), as the ADR's `-y` does.
                    "approval_mode": config.get("approval_mode", "yolo"),
                    "cwd": config.get("working_dir"),
                    **{
                        k: v for k, v in config.items() if k not in ("approval_mode", "working_dir")
                    },
                },
                GeminiOptions,
            )
        except msgspec.ValidationError as exc:
            raise GemwireError(f"invalid config: {exc}") from exc

    def validate(self) -> None:
        """Raise `GeminiNotFound` (with the install command) if the CLI is not there."""
        find_gemini(self.options.executable, cwd=self.options.cwd)

    def generate(self, prompt: str, context: Mapping[str, Any] | None = None) -> ProviderResult:
        """Run the prompt to the end. ``context`` is accepted for the interface; unused."""
        result = run_gemini_sync(prompt, self.options)
        result.raise_for_error()
        return ProviderResult(
            response=result.answer,
            files=dict.fromkeys(change.path for change in result.files_changed),
        )

    @classmethod
    def get_metadata(cls) -> dict[str, Any]:
        return {
            "name": "gemini-cli",
            "description": "Gemini CLI AI agent via subprocess (gemwire)",
            "requires_config": False,
            "config_keys": list(cls.CONFIG_KEYS),
            "default_response_timeout": 600,
            "fs_ability": "local-write",
        }
