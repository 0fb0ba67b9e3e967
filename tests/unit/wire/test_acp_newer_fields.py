"""What ACP added after schema 1.19 and ``wire.acp`` types now: the capability members
(``auth.terminal``, ``session.configOptions.boolean``, ``elicitation``, the agent's
``auth.logout``), terminal auth ``args``/``env``, and boolean config values. Each example is
written to the vendored schema (tests/fixtures/acp/schema/) and round-trips field for field."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from gemwire.protocol._strict import unknown_fields
from gemwire.runners.acp import AcpOptions
from gemwire.wire import acp

EXAMPLES: list[tuple[type[msgspec.Struct], dict[str, Any]]] = [
    (
        acp.InitializeRequest,
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
                "session": {"configOptions": {"boolean": {}}},
                "auth": {"terminal": True},
                "elicitation": {"form": {}, "url": {}},
            },
        },
    ),
    (
        acp.InitializeResponse,
        {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True, "auth": {"logout": {}}},
            "authMethods": [
                {
                    "id": "login",
                    "name": "Log in",
                    "type": "terminal",
                    "args": ["--login"],
                    "env": {"LOGIN_MODE": "device"},
                },
                {"id": "agent", "name": "Agent login"},
            ],
        },
    ),
    (
        acp.SetSessionConfigOptionRequest,
        {"sessionId": "s", "configId": "auto_approve", "type": "boolean", "value": True},
    ),
    (
        acp.SetSessionConfigOptionRequest,
        {"sessionId": "s", "configId": "model", "value": "gemini-2.5-pro"},
    ),
]


@pytest.mark.parametrize(("typ", "example"), EXAMPLES, ids=lambda x: getattr(x, "__name__", ""))
def test_the_newer_fields_round_trip(typ: type[msgspec.Struct], example: dict[str, Any]) -> None:
    decoded = msgspec.json.decode(json.dumps(example), type=typ)
    assert unknown_fields(example, typ) == []
    assert json.loads(msgspec.json.encode(decoded)) == example


def test_the_agent_auth_capabilities_are_read() -> None:
    typ, example = EXAMPLES[1]
    response = msgspec.convert(example, typ)
    assert isinstance(response, acp.InitializeResponse)
    assert response.agent_capabilities.auth == acp.AgentAuthCapabilities(logout={})
    assert (response.auth_methods[0].args, response.auth_methods[0].env) == (
        ["--login"],
        {"LOGIN_MODE": "device"},
    )
    assert acp.AgentCapabilities().auth.logout is None


def test_the_client_declares_exactly_what_it_serves() -> None:
    """The members gemwire does not serve stay out of ``initialize``; boolean config options
    it serves (`AcpSession.set_config_option`), and an agent may offer them only to a client
    that declares them; so do notices, compaction updates and plans by id, which it maps to
    events (subagents it does not: their sessions' traffic is not routed)."""
    capabilities = AcpOptions().client_capabilities(terminal=False)
    assert json.loads(msgspec.json.encode(capabilities)) == {
        "fs": {"readTextFile": False, "writeTextFile": True},
        "terminal": False,
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        "plan": {},
    }
