"""A scripted model on 127.0.0.1 that real agents talk to, in their providers' own APIs.

    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files)
        subprocess.run([gemini, "-o", "stream-json"], env=env.environ(), ...)
    assert model.problems == []
    assert model.requests[-1].function_responses()[0]["name"] == "write_file"

One server speaks every dialect; the request's path picks it, and the same `Scenario`
drives them all (one module per API, named as the API names things):

- Gemini (_gemini.py), for Gemini CLI through ``GOOGLE_GEMINI_BASE_URL``:
  ``POST /<version>/models/<model>:streamGenerateContent`` consumes the next turn;
  ``generateContent`` is a side call (model router, next-speaker check, web tools),
  answered with one JSON text that satisfies every side call of the pinned CLIs;
  ``countTokens`` answers a fixed count.
- Anthropic Messages (_anthropic.py), for Claude Code: ``POST /v1/messages`` and
  ``/v1/messages/count_tokens``.
- OpenAI Chat Completions (_openai_chat.py), for Qwen Code and OpenCode:
  ``POST /v1/chat/completions``; ``GET /v1/models``.
- OpenAI Responses (_openai_responses.py), for Codex: ``POST /v1/responses``.

A streamed Anthropic or OpenAI request that declares tools is a model turn; one without
tools, or not streamed, is a side call (titles, next-speaker checks) and is answered with
the same JSON text, without consuming a turn; but a request for a session's title (OpenCode's)
gets a plain title, as its title agent would answer (`TITLE_TEXT`). So is a request that is
streamed like a turn but is known not to be one (`_dialect.is_side_request`: Claude Code's
prompt suggestion after each turn, answered with nothing to suggest; codex-acp's request
for a session's title, answered with its JSON object). Side calls are
in `requests` (``turn`` ``None``), never in `problems`.

Every request is recorded. Anything a scenario did not foresee (no turn left, an unknown
endpoint) is answered with an HTTP 400 (404 for an endpoint) that names the problem, so the
agent stops at once instead of retrying, and is listed in `ScriptedModel.problems`.

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

from gemwire.testing import _anthropic, _gemini, _openai_chat, _openai_responses
from gemwire.testing._dialect import SIDE_CALL_TEXT, Dialect, Step, is_side_request, side_call_text
from gemwire.testing._routes import DialectName, route
from gemwire.testing.scenario import Delay, Fail, Hang, Reply, Scenario, Text, Truncate, Turn

__all__ = ("SIDE_CALL_TEXT", "DialectName", "RecordedRequest", "ScriptedModel")

_DIALECTS: dict[DialectName, Dialect] = {
    "gemini": _gemini,
    "anthropic": _anthropic,
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
}


class RecordedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request an agent sent, as the server received it."""

    method: str
    path: str
    model: str | None
    rpc: str | None
    """The Gemini API method after the colon: ``streamGenerateContent``, ``generateContent``,
    ...; for the other dialects the endpoint: ``messages``, ``count_tokens``,
    ``chat/completions``, ``responses``, ``models``."""
    api_key: str | None
    body: Any
    turn: int | None = None
    """Index of the scenario turn this request consumed, if any."""
    dialect: DialectName = "gemini"

    def function_declarations(self) -> list[str]:
        """Names of the tools the agent declared to the model in this request."""
        tools = (self.body or {}).get("tools") or []
        if self.dialect == "gemini":
            return [
                decl["name"] for tool in tools for decl in tool.get("functionDeclarations") or []
            ]
        if self.dialect == "openai-chat":
            return [tool["function"]["name"] for tool in tools if "function" in tool]
        return [tool["name"] for tool in tools if "name" in tool]

    def function_responses(self) -> list[dict[str, Any]]:
        """The ``functionResponse`` parts of the last content: tool results sent back
        (Gemini dialect)."""
        contents = (self.body or {}).get("contents") or []
        if not contents:
            return []
        parts = contents[-1].get("parts") or []
        return [part["functionResponse"] for part in parts if "functionResponse" in part]

    def texts(self) -> list[str]:
        """Every text part of the conversation history sent with this request (Gemini
        dialect)."""
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
        self._turn_requests = 0
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _Server(self)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL for ``GOOGLE_GEMINI_BASE_URL`` and ``ANTHROPIC_BASE_URL`` (OpenAI
        clients want `openai_url`)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients, which add ``/chat/completions`` or ``/responses``."""
        return f"{self.url}/v1"

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
        """How many model turns the agent asked for, whether or not a turn was left."""
        with self._lock:
            return self._turn_requests

    @property
    def turns_served(self) -> int:
        with self._lock:
            return len(self._turns) - len(self._unserved)

    @property
    def turns_left(self) -> int:
        with self._lock:
            return len(self._unserved)

    def play(self, scenario: Scenario) -> None:
        """Serve ``scenario`` from now on, as a new server would (its turns, no requests,
        no problems), at the same address: an agent started once, pointed here, can run
        case after case. A reply of the last scenario still hanging hangs on until `stop`."""
        with self._lock:
            self.scenario = scenario
            self._turns = scenario.expanded_turns()
            self._unserved = list(range(len(self._turns)))
            self._requests = []
            self._problems = []
            self._turn_requests = 0

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

    def _take_turn(self, dialect: Dialect, body: Any) -> tuple[int, Turn] | None:
        """The first unserved turn for this request: in order, skipping turns whose
        ``when`` the conversation does not contain."""
        prompt = "\n".join(dialect.user_texts(body))
        with self._lock:
            self._turn_requests += 1
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
        found = route(self.command, url.path, body)
        if found is None:
            message = f"gemwire scripted model: no such endpoint {self.command} {url.path}"
            model._problem(message)
            self._record(url.path, "gemini", None, None, body)
            return self._send_error(_gemini, Fail(status=404, message=message))
        name, rpc, model_name, action = found
        dialect = _DIALECTS[name]
        api_key = self._api_key(name, url.query)
        expected_key = model.scenario.api_key
        turn: tuple[int, Turn] | None = None
        if expected_key is not None and api_key != expected_key:
            self._record(url.path, name, rpc, model_name, body, api_key)
            if name == "gemini":  # a 400 from Gemini, a 401 in the API's own error shape elsewhere
                return self._send_json(400, _gemini.BAD_KEY_BODY)
            return self._send_error(dialect, Fail(status=401))
        if action == "turn" and is_side_request(dialect.user_texts(body)):
            action = "side"
        if action == "turn":
            turn = model._take_turn(dialect, body)
        self._record(url.path, name, rpc, model_name, body, api_key, turn)
        if action == "side":  # Gemini's are never streamed (generateContent)
            if (body or {}).get("stream"):
                text = side_call_text(dialect.user_texts(body))
                steps = dialect.stream(Reply([Text(text)]), model_name, -1, body)
                return self._stream(steps, dialect)
            if name == "gemini":
                return self._send_json(200, _gemini.side_call_response())
            side = _anthropic if name == "anthropic" else _openai_chat
            return self._send_json(200, side.side_call_response(model_name))
        if action == "count":
            count = {"totalTokens": 100} if name == "gemini" else _anthropic.count_tokens_response()
            return self._send_json(200, count)
        if action == "models":
            return self._send_json(200, _openai_chat.models_response(model_name))
        if turn is None:
            message = (
                f"gemwire scripted model: no turn left for streaming request "
                f"{model.streaming_requests} ({model.turns_served} of "
                f"{model.turns_served + model.turns_left} served)"
            )
            model._problem(message)
            return self._send_error(dialect, Fail(status=400, message=message))
        index, scripted = turn
        if isinstance(scripted, Fail):
            return self._send_error(dialect, scripted)
        return self._stream(dialect.stream(scripted, model_name, index, body), dialect)

    def _api_key(self, dialect: DialectName, query: str) -> str | None:
        if dialect == "gemini":
            return self.headers.get("x-goog-api-key") or parse_qs(query).get("key", [None])[0]
        if dialect == "anthropic" and self.headers.get("x-api-key"):
            return self.headers.get("x-api-key")
        authorization = self.headers.get("Authorization") or ""
        return authorization.removeprefix("Bearer ") or None

    def _record(
        self,
        path: str,
        dialect: DialectName,
        rpc: str | None,
        model_name: str | None,
        body: Any,
        api_key: str | None = None,
        turn: tuple[int, Turn] | None = None,
    ) -> None:
        self.server.model._record(
            RecordedRequest(
                method=self.command,
                path=path,
                model=model_name or None,
                rpc=rpc,
                api_key=api_key,
                body=body,
                turn=turn[0] if turn else None,
                dialect=dialect,
            )
        )

    def _send_error(self, dialect: Dialect, fail: Fail) -> None:
        headers, reply = dialect.error(fail)
        self._send_json(fail.status, reply, headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, steps: list[Step], dialect: Dialect) -> None:
        stopping = self.server.model._stopping
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for step in steps:
            if isinstance(step, Delay):
                if stopping.wait(step.seconds):
                    return self._drop()
            elif isinstance(step, Hang):
                stopping.wait()
                return self._drop()
            elif isinstance(step, Truncate):
                self._write_chunk(dialect.TRUNCATED)
                return self._drop()
            else:
                self._write_chunk(step)
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _drop(self) -> None:
        """End the response without the closing chunk: the client sees a cut stream."""
        self.close_connection = True
        with contextlib.suppress(OSError):  # already gone
            self.connection.shutdown(socket.SHUT_RDWR)
