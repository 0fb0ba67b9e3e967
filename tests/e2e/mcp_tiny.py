"""A stdio MCP server with one tool, named by its argument: ``python mcp_tiny.py NAME`` offers the
tool ``NAME_tool``, which answers ``NAME says hi`` (tests see which servers Gemini CLI started,
and the tool's answer in the run's events)."""

from __future__ import annotations

import json
import sys


def main() -> None:
    name = sys.argv[1]
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "1"},
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            tool = {"name": f"{name}_tool", "description": "does nothing", "inputSchema": schema}
            result = {"tools": [tool]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": f"{name} says hi"}]}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        sys.stdout.write("\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
