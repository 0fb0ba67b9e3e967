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
from gemwire.runners.gemini_options import ApprovalMode, GeminiOptions

__all__ = ("GeminiCliProvider", "ProviderResult")


class ProviderResult(msgspec.Struct, frozen=True, kw_only=True):
    response: str
    files: dict[str, None]
    """Files written or edited by successful tool calls, in order (absolute paths)."""


class _Config(msgspec.Struct, kw_only=True):
    """The provider's config (ADR-0014's keys), typed as `GeminiOptions` types them; decoded
    on its own because `GeminiOptions` as a whole is not decodable (its ``mcp_servers`` are
    ACP's untagged union, sent only)."""

    model: str | None = None
    sandbox: bool = False
    # The provider writes files (fs_ability local-write), as the ADR's `-y` does.
    approval_mode: ApprovalMode | None = "yolo"
    include_directories: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] = ()
    working_dir: str | None = None
    timeout: float | None = None
    executable: str | None = None


class GeminiCliProvider:
    """Gemini CLI as a response provider. Failures raise gemwire's `RunFailed` subclasses."""

    CONFIG_KEYS: ClassVar[tuple[str, ...]] = _Config.__struct_fields__

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = dict(config or {})
        unknown = sorted(set(config) - set(self.CONFIG_KEYS))
        if unknown:
            raise GemwireError(
                f"unknown config key(s) {unknown}; known: {', '.join(self.CONFIG_KEYS)}"
            )
        try:
            typed = msgspec.convert(config, _Config)
        except msgspec.ValidationError as exc:
            raise GemwireError(f"invalid config: {exc}") from exc
        fields = msgspec.structs.asdict(typed)
        self.options = GeminiOptions(cwd=fields.pop("working_dir"), **fields)

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
