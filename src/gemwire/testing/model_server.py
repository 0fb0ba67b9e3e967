"""A scripted stand-in for the Gemini API on 127.0.0.1, for the real Gemini CLI to talk to.

    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files)
        subprocess.run([gemini, "-o", "stream-json"], env=env.environ(), ...)
    assert model.problems == []
    assert model.requests[-1].function_responses()[0]["name"] == "write_file"

The CLI reaches it through ``GOOGLE_GEMINI_BASE_URL``. Requests arrive as
``POST /<version>/models/<model>:<method>``:

- ``streamGenerateContent`` (the real model turns) consumes the scenario's next turn;
- ``generateContent`` is a side call (model router, next-speaker check, web tools); it is
  answered with one JSON text that satisfies every side call of the pinned CLIs;
- ``countTokens`` answers a fixed count; anything else gets a Google-style 404.

Every request is recorded. Anything a scenario did not foresee (no turn left, an unknown
endpoint) is answered with an HTTP 400 that names the problem, so the CLI stops at once
instead of retrying, and is listed in `ScriptedModel.problems`.

The server runs in threads, so it serves sync and async tests alike; `stop()` releases
hanging responses and closes every connection.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

import msgspec

from gemwire.testing.scenario import (
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Hang,
    Reply,
    Scenario,
    Text,
    Thought,
    Truncate,
    Turn,
)

__all__ = ("RecordedRequest", "ScriptedModel")

# One text satisfies every structured side call of 0.15.4, 0.30.0 and 0.61.0: the
# model router / classifier reads reasoning + model_choice, the next-speaker check reads
# next_speaker.
SIDE_CALL_TEXT = json.dumps(
    {
        "reasoning": "scripted by gemwire",
        "model_choice": "flash",
        "complexity_reasoning": "scripted by gemwire",
        "complexity_score": 10,
        "next_speaker": "user",
    }
)

_BAD_KEY_BODY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ],
    }
}


class RecordedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request the CLI sent, as the server received it."""

    method: str
    path: str
    model: str | None
    rpc: str | None
    """The API method after the colon: ``streamGenerateContent``, ``generateContent``, ..."""
    api_key: str | None
    body: Any
    turn: int | None = None
    """Index of the scenario turn this request consumed, if any."""

    def function_declarations(self) -> list[str]:
        """Names of the tools the CLI declared to the model in this request."""
        names: list[str] = []
        for tool in (self.body or {}).get("tools") or []:
            names.extend(decl["name"] for decl in tool.get("functionDeclarations") or [])
        return names

    def function_responses(self) -> list[dict[str, Any]]:
        """The ``functionResponse`` parts of the last content: tool results sent back."""
        contents = (self.body or {}).get("contents") or []
        if not contents:
            return []
        parts = contents[-1].get("parts") or []
        return [part["functionResponse"] for part in parts if "functionResponse" in part]

    def texts(self) -> list[str]:
        """Every text part of the conversation history sent with this request."""
        return [
            part["text"]
            for content in (self.body or {}).get("contents") or []
            for part in content.get("parts") or []
            if "text" in part
        ]


class ScriptedModel:
    """Serves a `Scenario` over HTTP on 127.0.0.1 (ephemeral port) until stopped."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._turns: list[Turn] = scenario.expanded_turns()
        self._unserved = list(range(len(self._turns)))
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._problems: list[str] = []
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _Server(self)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL for ``GOOGLE_GEMINI_BASE_URL``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def problems(self) -> list[str]:
        """What the scenario did not foresee; empty when the run went as scripted."""
        with self._lock:
            return list(self._problems)

    @property
    def streaming_requests(self) -> int:
        """How many model turns the CLI asked for, whether or not a turn was left."""
        with self._lock:
            return sum(r.rpc == "streamGenerateContent" for r in self._requests)

    @property
    def turns_served(self) -> int:
        with self._lock:
            return len(self._turns) - len(self._unserved)

    @property
    def turns_left(self) -> int:
        with self._lock:
            return len(self._unserved)

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="gemwire-scripted-model",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: release hanging replies, close connections, free the port."""
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):  # already closed by the peer
                conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- used by the request handler -------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _problem(self, message: str) -> None:
        with self._lock:
            self._problems.append(message)

    def _take_turn(self, body: Any) -> tuple[int, Turn] | None:
        """The first unserved turn for this request: in order, skipping turns whose
        ``when`` the conversation does not contain."""
        prompt = "\n".join(_user_texts(body))
        with self._lock:
            for position, index in enumerate(self._unserved):
                when = self._turns[index].when
                if when is None or when in prompt:
                    del self._unserved[position]
                    return index, self._turns[index]
            return None

    def _track(self, conn: socket.socket, *, open: bool) -> None:
        with self._lock:
            if open:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that was killed mid-connection is expected here, not an error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.model._track(self.connection, open=True)

    def finish(self) -> None:
        self.server.model._track(self.connection, open=False)
        with contextlib.suppress(OSError):  # the client went away; nothing left to flush
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request logging on stderr."""

    def do_GET(self) -> None:
        self._handle(body=None)

    def do_POST(self) -> None:
        try:
            body = json.loads(self._read_body() or b"null")
        except ValueError:
            body = None
        self._handle(body)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while size := int(self.rfile.readline().split(b";")[0], 16):
                data += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
            return bytes(data)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self, body: Any) -> None:
        model = self.server.model
        url = urlsplit(self.path)
        model_name, _, rpc = url.path.rpartition("/models/")[2].partition(":")
        api_key = self.headers.get("x-goog-api-key") or parse_qs(url.query).get("key", [None])[0]
        turn: tuple[int, Turn] | None = None
        reply: dict[str, Any]
        expected_key = model.scenario.api_key
        if expected_key is not None and api_key != expected_key:
            status, reply = 400, _BAD_KEY_BODY
        elif self.command == "POST" and rpc == "streamGenerateContent":
            turn = model._take_turn(body)
            if turn is None:
                message = (
                    f"gemwire scripted model: no turn left for streaming request "
                    f"{model.streaming_requests + 1} ({model.turns_served} of "
                    f"{model.turns_served + model.turns_left} served)"
                )
                model._problem(message)
                status, reply = 400, _error_body(400, message)
        elif self.command == "POST" and rpc == "generateContent":
            status, reply = 200, _side_call_response()
        elif self.command == "POST" and rpc == "countTokens":
            status, reply = 200, {"totalTokens": 100}
        else:
            message = f"gemwire scripted model: no such endpoint {self.command} {url.path}"
            model._problem(message)
            status, reply = 404, _error_body(404, message)

        model._record(
            RecordedRequest(
                method=self.command,
                path=url.path,
                model=model_name or None,
                rpc=rpc or None,
                api_key=api_key,
                body=body,
                turn=turn[0] if turn else None,
            )
        )
        if turn is None:
            self._send_json(status, reply)
        elif isinstance(turn[1], Fail):
            self._send_json(turn[1].status, turn[1].body())
        else:
            self._stream(turn[1], model_name)

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, reply: Reply, model_name: str) -> None:
        stopping = self.server.model._stopping
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        steps = _plan(reply)
        for index, step in enumerate(steps):
            if isinstance(step, Delay):
                if stopping.wait(step.seconds):
                    return self._drop()
            elif isinstance(step, Hang):
                stopping.wait()
                return self._drop()
            elif isinstance(step, Truncate):
                self._write_chunk(b'data: {"candidates": [{"content": {"ro')
                return self._drop()
            else:
                final = index == len(steps) - 1
                event = _event(step, reply, model_name, final=final)
                self._write_chunk(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _drop(self) -> None:
        """End the response without the closing chunk: the client sees a cut stream."""
        self.close_connection = True
        with contextlib.suppress(OSError):  # already gone
            self.connection.shutdown(socket.SHUT_RDWR)


_Step = list[dict[str, Any]] | Delay | Hang | Truncate


def _plan(reply: Reply) -> list[_Step]:
    """Turn a reply's chunks into server-sent events (lists of parts) and pauses.

    The reply's last step is always an event, the one that carries ``finishReason`` and
    usage, unless the reply ends by hanging or by cutting the stream.
    """
    steps: list[_Step] = []
    for chunk in reply.chunks:
        match chunk:
            case Text(text=text):
                steps.append([{"text": text}])
            case Thought(text=text):
                steps.append([{"text": text, "thought": True}])
            case FunctionCall():
                steps.append([_function_call_part(chunk)])
            case FunctionCalls(calls=calls):
                steps.append([_function_call_part(call) for call in calls])
            case Delay() | Hang() | Truncate():
                steps.append(chunk)
    if not steps or not isinstance(steps[-1], list | Hang | Truncate):
        steps.append([])
    return steps


def _function_call_part(call: FunctionCall) -> dict[str, Any]:
    function_call: dict[str, Any] = {"name": call.name, "args": call.args}
    if call.id is not None:
        function_call["id"] = call.id
    return {"functionCall": function_call}


def _event(parts: list[dict[str, Any]], reply: Reply, model_name: str, *, final: bool) -> Any:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    event: dict[str, Any] = {"candidates": [candidate], "modelVersion": model_name}
    if final:
        candidate["finishReason"] = reply.finish_reason
        usage = reply.usage
        event["usageMetadata"] = {
            "promptTokenCount": usage.prompt,
            "candidatesTokenCount": usage.output,
            "cachedContentTokenCount": usage.cached,
            "thoughtsTokenCount": usage.thoughts,
            "totalTokenCount": usage.total,
        }
    return event


def _user_texts(body: Any) -> list[str]:
    """Text parts of the user's side of the conversation sent with a request."""
    return [
        part["text"]
        for content in (body or {}).get("contents") or []
        if content.get("role") == "user"
        for part in content.get("parts") or []
        if isinstance(part.get("text"), str)
    ]


def _side_call_response() -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": SIDE_CALL_TEXT}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }


def _error_body(status: int, message: str) -> dict[str, Any]:
    return Fail(status=status, message=message).body()
