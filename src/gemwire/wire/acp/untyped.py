"""What the ACP schema has that `gemwire.wire.acp` leaves raw on purpose, each with the reason.

The drift test (tests/unit/wire/test_acp_schema_drift.py) holds this list to the vendored
schema (tests/fixtures/acp/schema/, the unstable v1 schema of release 1.24.1, a superset of
the stable one): every method, capability and session update kind there is typed in
``wire.acp`` or named here, and nothing named here is typed or gone. So this is the honest
backlog of what gemwire does not speak yet. Raw means: a method's messages reach the caller
as plain JSON (an agent's request for it is answered "method not found"), a capability
member is not read, an update kind arrives as an ``UnknownUpdate``.

>>> sorted(METHODS)[:3], len(CAPABILITIES), SESSION_UPDATES
(['document/didChange', 'document/didClose', 'document/didFocus'], 27, {})
"""

from __future__ import annotations

__all__ = ("CAPABILITIES", "METHODS", "SESSION_UPDATES")

_NES = (
    "next edit suggestions are an editor's feature (a cursor, open documents); gemwire "
    "drives coding agents and has no editor to suggest edits in"
)
_PROVIDERS = (
    "provider configuration is the agent's own setup (its login, its endpoints); gemwire "
    "configures an agent by its environment and home (docs/acp.md)"
)
_MCP_OVER_ACP = (
    "MCP servers hosted by the client over the ACP connection: gemwire passes MCP servers "
    "the agent runs itself (stdio, http, sse) and hosts none"
)

METHODS: dict[str, str] = {
    **dict.fromkeys(
        (
            "document/didChange",
            "document/didClose",
            "document/didFocus",
            "document/didOpen",
            "document/didSave",
            "nes/accept",
            "nes/close",
            "nes/reject",
            "nes/start",
            "nes/suggest",
        ),
        _NES,
    ),
    **dict.fromkeys(("providers/disable", "providers/list", "providers/set"), _PROVIDERS),
    "mcp/message": _MCP_OVER_ACP,
}
"""Schema methods without a name in `AGENT_METHODS` / `CLIENT_METHODS` / `PROTOCOL_METHODS`."""

CAPABILITIES: dict[str, str] = {
    **dict.fromkeys(
        (
            "AgentCapabilities.nes",
            "AgentCapabilities.positionEncoding",
            "ClientCapabilities.nes",
            "ClientCapabilities.positionEncodings",
            "ClientNesCapabilities.jump",
            "ClientNesCapabilities.rename",
            "ClientNesCapabilities.searchAndReplace",
            "NesCapabilities.context",
            "NesCapabilities.events",
            "NesContextCapabilities.diagnostics",
            "NesContextCapabilities.editHistory",
            "NesContextCapabilities.openFiles",
            "NesContextCapabilities.recentFiles",
            "NesContextCapabilities.relatedSnippets",
            "NesContextCapabilities.userActions",
            "NesDocumentDidChangeCapabilities.syncKind",
            "NesDocumentEventCapabilities.didChange",
            "NesDocumentEventCapabilities.didClose",
            "NesDocumentEventCapabilities.didFocus",
            "NesDocumentEventCapabilities.didOpen",
            "NesDocumentEventCapabilities.didSave",
            "NesEditHistoryCapabilities.maxCount",
            "NesEventCapabilities.document",
            "NesRecentFilesCapabilities.maxCount",
            "NesUserActionsCapabilities.maxCount",
        ),
        _NES,
    ),
    "AgentCapabilities.providers": _PROVIDERS,
    "McpCapabilities.acp": _MCP_OVER_ACP,
}
"""Capability members (``<schema type>.<member>``) our capability types do not declare."""

SESSION_UPDATES: dict[str, str] = {}
"""``sessionUpdate`` kinds without a type in `SESSION_UPDATE_TYPES`."""
