#!/usr/bin/env python3
"""A hostile ACP agent for ``gemwire eval --sandbox``: sandbox_probe.py's tries, over ACP.

On its prompt it makes every try of `sandbox_probe.probes`, then asks the client to do
what the sandbox stops it doing itself: write a file (``fs/write_text_file``) and run a
command (``terminal/create``) on the host; and asks permission to edit, which the task's
preset answers. It notes all in ``probes.json``, solves the task (``answer`` = 42) and
ends its turn. It says it is gemwire's scripted agent, whose ``default`` mode asks.
Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script
from kit.sandbox_probe import probes

_next_id = 0


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The client's answer to a request (its result, or its error)."""
    global _next_id
    _next_id += 1
    send({"id": f"probe-{_next_id}", "method": method, "params": params})
    for line in sys.stdin:
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == f"probe-{_next_id}" and "method" not in message:
            return message
    raise SystemExit(0)


def refused(answer: dict[str, Any]) -> str:
    error = answer.get("error")
    return f"refused: {error['code']}" if error else f"done: {answer.get('result')}"


def prompt(session: str) -> None:
    tries: dict[str, object] = dict(probes())
    victim = os.environ["PROBE_VICTIM"]
    write = {"sessionId": session, "path": victim, "content": "escaped"}
    tries["client_write"] = refused(ask("fs/write_text_file", write))
    run = {"sessionId": session, "command": "sh", "args": ["-c", f"echo escaped > {victim}"]}
    tries["client_terminal"] = refused(ask("terminal/create", run))
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    call = {"toolCallId": "edit-1", "title": "Write answer", "kind": "edit"}
    asked = {"sessionId": session, "toolCall": call, "options": options}
    tries["permission"] = ask("session/request_permission", asked).get("result")
    Path("probes.json").write_text(json.dumps(tries, indent=1))
    Path("answer").write_text("42")
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "42"}}
    send({"method": "session/update", "params": {"sessionId": session, "update": chunk}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method is None:
            continue
        result: dict[str, Any] = {}
        if method == "initialize":
            result = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "authMethods": [],
                "agentInfo": {"name": "scripted", "version": "0"},
            }
        elif method == "session/new":
            modes = {
                "currentModeId": "default",
                "availableModes": [{"id": "default", "name": "Default"}],
            }
            result = {"sessionId": "probe-session", "modes": modes}
        elif method == "session/prompt":
            prompt(params["sessionId"])
            result = {"stopReason": "end_turn"}
        send({"id": message["id"], "result": result})


if __name__ == "__main__":
    main()
