"""A fake ACP agent for fault injection (synthetic: FAKE_ACP_MODE says how it misbehaves).

It answers initialize and session/new, then on session/prompt does what the mode says.
Replies the client sends to its own requests are reported back as agent_message_chunk
text ``reply <method>: <json>``, so tests can assert exactly what the client answered.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

SESSION = "fake-session"
# Named and moded as gemwire's scripted agent, which gemwire knows asks in "default"
# (gemwire.runners.acp.asking): it does only what its mode says, asking where that asks.
MODES = {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Ask"}]}
MODE = os.environ.get("FAKE_ACP_MODE", "echo")
_next_id = 0


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def update(kind: str, session: str = SESSION, **fields: object) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": {"sessionUpdate": kind, **fields}},
        }
    )


def say(text: str) -> None:
    update("agent_message_chunk", content={"type": "text", "text": text})


def read() -> dict[str, object]:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    message: dict[str, object] = json.loads(line)
    return message


def call(method: str, params: dict[str, object]) -> dict[str, object]:
    """Ask the client; notifications meanwhile are remembered in `seen`."""
    global _next_id
    request_id = _next_id
    _next_id += 1
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    while True:
        message = read()
        if message.get("id") == request_id and "method" not in message:
            reply = message.get("result", {"error": message.get("error")})
            say(f"reply {method}: {json.dumps(reply, sort_keys=True)}")
            return message
        seen.append(message)


seen: list[dict[str, object]] = []
sessions: list[str] = []
prompts: list[tuple[object, str]] = []  # interleave: (request id, session id) waiting


def interleave(request_id: object, session_id: str) -> None:
    """Answer nothing until FAKE_ACP_SESSIONS prompts wait, then send every session's
    updates interleaved, and end each turn."""
    prompts.append((request_id, session_id))
    if len(prompts) < int(os.environ.get("FAKE_ACP_SESSIONS", "2")):
        return
    for n in range(int(os.environ.get("FAKE_ACP_CHUNKS", "20"))):
        for _, sid in prompts:
            update(
                "agent_message_chunk", content={"type": "text", "text": f"{sid}:{n} "}, session=sid
            )
    for rid, _ in prompts:
        send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
    prompts.clear()


def prompt(request_id: object, text: str) -> None:
    if MODE == "echo":
        say(f"echo: {text}")
    elif MODE == "crash_mid_request":
        say("partial")
        os.kill(os.getpid(), signal.SIGKILL)
    elif MODE == "garbage":
        raw("this is not json")
        raw("[1, 2, 3]")
        raw('{"jsonrpc":"1.0","method":"session/update","params":{}}')
        raw('{"jsonrpc":"2.0","id":4242,"result":{}}')
        raw('{"jsonrpc":"2.0","result":{}}')
        raw('{"jsonrpc":"2.0","method":"_vendor/ping","params":{"n":1}}')
        update("teleport_update", where="moon")
        update("agent_message_chunk", content={"type": "video", "uri": "x"})
        call("foo/bar", {"sessionId": SESSION})
        call("fs/write_text_file", {"sessionId": SESSION})  # no path: invalid params
        say("still here")
    elif MODE == "bad_frames":
        head = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION + '",'
        chunk = '"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":'
        sys.stdout.flush()
        out = sys.stdout.buffer
        out.write((head + chunk).encode() + b'"bad \xff\xfe utf-8"}}}}\n')
        out.write((head + '"update":' + "[" * 5000 + "]" * 5000 + "}}\n").encode())
        out.write(b'{"jsonrpc":"2.0","method":"_x","params":{"a":"\xff"}}\n')
        out.write(b'{"jsonrpc":"2.0","method":"_x","params":' + b"{" * 100_000 + b"\n")
        out.flush()
        say("still here")
    elif MODE == "stderr_flood":
        block = b"z" * (1 << 20)
        for _ in range(int(os.environ.get("FAKE_ACP_STDERR_MB", "64"))):
            sys.stderr.buffer.write(block)
        sys.stderr.buffer.flush()
        say("done")
    elif MODE == "terminal_env":
        created = call(
            "terminal/create",
            {
                "sessionId": SESSION,
                "command": "sh",
                "args": ["-c", "env"],
                "env": [{"name": "GIT_CONFIG_COUNT", "value": "1"}],
            },
        )
        terminal = created.get("result", {})
        if isinstance(terminal, dict) and "terminalId" in terminal:
            ids = {"sessionId": SESSION, "terminalId": terminal["terminalId"]}
            call("terminal/wait_for_exit", ids)
            call("terminal/output", ids)
    elif MODE == "env_tool":  # `env | grep _KEY` run by the agent: keys in its tool output
        keys = "".join(f"{k}={v}\n" for k, v in sorted(os.environ.items()) if k.endswith("_KEY"))
        tool = {"toolCallId": "env-1", "title": "env | grep _KEY", "kind": "execute"}
        params = {"sessionId": SESSION, "update": {"sessionUpdate": "tool_call", **tool}}
        send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        output = {"type": "content", "content": {"type": "text", "text": keys}}
        update("tool_call_update", toolCallId="env-1", status="completed", content=[output])
        say(f"Your OpenAI key is {os.environ['OPENAI_API_KEY']}.")
        print(f"debug: using {os.environ['ANTHROPIC_API_KEY']}", file=sys.stderr, flush=True)
    elif MODE == "prompt_error_secret":
        text = f"invalid key {os.environ['GOOGLE_API_KEY']}"
        error = {"code": -32603, "message": text, "data": {"env": dict(os.environ)}}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})
        return
    elif MODE == "big_frame":
        say("a" * 64_000_000)
        say("after")
    elif MODE == "flood":
        for n in range(20_000):
            say(f"{n} ")
    elif MODE == "permission":
        reply = call(
            "session/request_permission",
            {
                "sessionId": SESSION,
                "toolCall": {
                    "toolCallId": "call-1",
                    "title": os.environ.get("FAKE_ACP_TITLE", "Run rm"),
                    "kind": "execute",
                },
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            },
        )
        # Cancelled meanwhile? Then the turn ends as cancelled, as the spec says.
        result = reply.get("result")
        if isinstance(result, dict) and result.get("outcome") == {"outcome": "cancelled"}:
            send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "cancelled"}})
            return
    elif MODE == "until_cancelled":
        say("working")
        while read().get("method") != "session/cancel":
            pass
        send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "cancelled"}})
        return
    elif MODE == "ignore_cancel":
        say("working")
        while True:  # never answers the prompt
            seen.append(read())
            if seen[-1].get("method") == "session/cancel" and "FAKE_ACP_CANCELLED" in os.environ:
                with open(os.environ["FAKE_ACP_CANCELLED"], "w") as cancelled:
                    cancelled.write(f"{os.getpid()}\n")
    elif MODE == "fs":
        for path in json.loads(os.environ["FAKE_ACP_PATHS"]):
            call("fs/write_text_file", {"sessionId": SESSION, "path": path, "content": "pwned\n"})
        for path in json.loads(os.environ.get("FAKE_ACP_READS", "[]")):
            call("fs/read_text_file", {"sessionId": SESSION, "path": path})
    elif MODE == "terminal":
        created = call(
            "terminal/create",
            {
                "sessionId": SESSION,
                "command": "sh",
                "args": [
                    "-c",
                    os.environ.get(
                        "FAKE_ACP_TERMINAL", "printf 'hello\\n'; printf 'err\\n' >&2; exit 3"
                    ),
                ],
                "outputByteLimit": 1000,
            },
        )
        terminal = created.get("result", {})
        if isinstance(terminal, dict) and "terminalId" in terminal:
            ids = {"sessionId": SESSION, "terminalId": terminal["terminalId"]}
            call("terminal/wait_for_exit", ids)
            call("terminal/output", ids)
            call("terminal/release", ids)
    elif MODE == "lone_surrogate":  # json.dumps writes half an emoji as Node does: "\ud83d"
        allow = {"optionId": "yes", "name": "Allow", "kind": "allow_once"}
        tool = {"toolCallId": "call-1", "title": "Write \ud83d", "kind": "edit"}
        call(
            "session/request_permission",
            {"sessionId": SESSION, "toolCall": tool, "options": [allow]},
        )
        path = os.path.join(os.getcwd(), "cut.txt")
        call("fs/write_text_file", {"sessionId": SESSION, "path": path, "content": "cut \ud83d"})
        say("big \ud83d")
    elif MODE == "slow":
        say("thinking")
        time.sleep(30)
    send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})


def main() -> None:
    if MODE == "bad_init":
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"_x","params":{"a":"\xff"}}\n')
        sys.stdout.buffer.write(b"[" * 100_000 + b"\n")
        sys.stdout.flush()
    while True:
        message = read()
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params")
        assert isinstance(params, dict) or params is None
        if method == "initialize" and MODE == "mute":
            continue  # never answers
        if method == "authenticate" and MODE == "echo_secret":
            assert params is not None
            meta = params.get("_meta")
            assert isinstance(meta, dict)
            text = f"invalid key {meta['api-key']}"
            error = {"code": -32000, "message": text, "data": {"key": meta["api-key"]}}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
        elif method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": 1,
                        "agentInfo": {"name": "scripted", "version": "0.0.1"},
                        "agentCapabilities": {"loadSession": False},
                    },
                }
            )
            print(f"initialize {json.dumps(params, sort_keys=True)}", file=sys.stderr)
        elif method == "session/new" and MODE == "new_session_error_secret":
            text = f"cannot start: OPENAI_API_KEY={os.environ['OPENAI_API_KEY']} refused"
            error = {"code": -32603, "message": text}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
        elif method == "session/new":
            session = SESSION if MODE != "interleave" else f"s{len(sessions)}"
            sessions.append(session)
            result = {"sessionId": session, "modes": MODES}
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "session/set_mode":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "session/prompt":
            assert params is not None
            blocks = params["prompt"]
            assert isinstance(blocks, list)
            if MODE == "interleave":
                interleave(request_id, str(params["sessionId"]))
            else:
                prompt(request_id, " ".join(b.get("text", "") for b in blocks))
        elif request_id is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )


if __name__ == "__main__":
    main()
