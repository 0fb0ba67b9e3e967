"""ACP wire types: the exact upstream names on the wire."""

from __future__ import annotations

import json

import msgspec

from gemwire.wire import acp


def test_the_client_sends_exact_wire_names() -> None:
    request = acp.NewSessionRequest(
        cwd="/w",
        mcp_servers=[acp.McpServerStdio(name="fs", command="mcp-fs", args=["-v"])],
        additional_directories=["/x"],
    )
    assert json.loads(msgspec.json.encode(request)) == {
        "cwd": "/w",
        "mcpServers": [{"name": "fs", "command": "mcp-fs", "args": ["-v"], "env": []}],
        "additionalDirectories": ["/x"],
    }
    prompt = acp.PromptRequest(
        session_id="s",
        prompt=[
            acp.TextContent(text="look"),
            acp.ResourceLink(name="a.py", uri="file:///w/a.py"),
            acp.EmbeddedResource(resource=acp.ResourceContents(uri="file:///n", text="note")),
            acp.ImageContent(data="AAAA", mime_type="image/png"),
        ],
    )
    assert json.loads(msgspec.json.encode(prompt))["prompt"] == [
        {"type": "text", "text": "look"},
        {"type": "resource_link", "name": "a.py", "uri": "file:///w/a.py"},
        {"type": "resource", "resource": {"uri": "file:///n", "text": "note"}},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    ]
