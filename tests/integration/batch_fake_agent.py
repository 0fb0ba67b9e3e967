"""A fake ACP agent for batch tests (synthetic). BATCH_AGENT_MODE says how it behaves:

- ``echo``: answers every prompt with ``done <prompt>``;
- ``mute``: never answers ``initialize``;
- ``hang``: never ends a prompt until it is cancelled;
- ``busy_once``: rejects the first ``session/new`` of the batch with a 429 (the file
  ``BATCH_AGENT_STATE`` remembers it across agent processes), then echoes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

MODE = os.environ.get("BATCH_AGENT_MODE", "echo")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def say(session: str, text: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": session, "update": update}})


MODES = {"currentModeId": "yolo", "availableModes": [{"id": "default"}, {"id": "yolo"}]}
"""Modes as Gemini CLI names them. As ``batch-fake`` gemwire does not know which asks, so a
batch runs it only in a mode chosen for it (``AcpOptions.mode``); as ``gemini-cli``
(``BATCH_AGENT_NAME``) it is put in ``default``."""


def busy_once() -> bool:
    state = Path(os.environ["BATCH_AGENT_STATE"])
    if state.exists():
        return False
    state.write_text("rejected once\n")
    return True


def main() -> None:
    sessions = 0
    pending: dict[str, object] = {}
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id, params = message.get("method"), message.get("id"), message.get("params")
        if method == "initialize":
            if MODE == "mute":
                continue
            info = {"name": os.environ.get("BATCH_AGENT_NAME", "batch-fake"), "version": "1.0.0"}
            send({"id": request_id, "result": {"protocolVersion": 1, "agentInfo": info}})
        elif method == "session/new":
            if MODE == "busy_once" and busy_once():
                error = {"code": 429, "message": "Resource has been exhausted (e.g. check quota)."}
                send({"id": request_id, "error": error})
                continue
            sessions += 1
            send({"id": request_id, "result": {"sessionId": f"s{sessions}", "modes": MODES}})
        elif method == "session/set_mode":
            send({"id": request_id, "result": {}})
        elif method == "session/prompt":
            session = params["sessionId"]
            if MODE == "hang":
                say(session, "working")
                pending[session] = request_id
                continue
            text = " ".join(block.get("text", "") for block in params["prompt"])
            say(session, f"done {text}")
            send({"id": request_id, "result": {"stopReason": "end_turn"}})
        elif method == "session/cancel" and MODE == "hang":
            cancelled = pending.pop(params["sessionId"])
            send({"id": cancelled, "result": {"stopReason": "cancelled"}})
        elif request_id is not None:
            send({"id": request_id, "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
