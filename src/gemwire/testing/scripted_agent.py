"""`ScriptedAgent`: an ACP agent that plays an `AgentScenario`, to test an ACP client or UI with.

It answers ``initialize`` with its scenario's ``agentInfo`` and ``agentCapabilities``,
``session/new`` with the sessions ``s0``, ``s1``, ... and the scenario's modes (as a real
agent names them; ``session/set_mode`` to one of them is answered), and each
``session/prompt`` by playing the scenario's next turn
(`gemwire.testing.agent_scenario`); every message it sends is built
from the ACP types of `gemwire.wire.acp`. It runs on the agent end of a `memory_channel_pair`
in this process (`scripted_client` puts gemwire's own `AcpClient` on the other end), or as a
program any client starts: ``python -m gemwire.testing agent SCENARIO`` speaks ACP on stdin
and stdout (`serve_stdio`).

A test that needs logic rather than data gives ``on_prompt``, which plays the turn in code
(`say`, `update`, `request`; ``cancelled`` is set by ``session/cancel``) and returns its stop
reason, and ``methods`` for requests beyond those (``session/load``, ``session/close``...);
either may raise `ScriptedError` to answer with that JSON-RPC error. A subclass answers
more, or otherwise, by overriding `answer` (a request's result) or `respond` (the whole
exchange: what it sends around the answer, or no answer). Each request is answered
in a task of its own, so a turn can ask the client things and see a ``session/cancel``
meanwhile. What the client sent is in ``received``; what the scenario did not foresee (a
prompt with no turn left, an answer that is not ACP) is in ``problems``.
"""

from __future__ import annotations

import functools
import json
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import msgspec

from gemwire.runners.acp import AcpClient, AcpOptions, MemoryChannel, memory_channel_pair
from gemwire.testing._agent_turn import play
from gemwire.testing.agent_scenario import AgentScenario, ScriptedError, session_update
from gemwire.wire import acp
from gemwire.wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)

__all__ = (
    "MethodHandler",
    "PromptHandler",
    "ScriptedAgent",
    "scripted_client",
    "serve_stdio",
)

PromptHandler = Callable[["ScriptedAgent", str, dict[str, Any]], Awaitable[str]]
"""``on_prompt(agent, session_id, params)``: plays one turn, returns its stop reason."""
MethodHandler = Callable[["ScriptedAgent", dict[str, Any]], Awaitable[Any]]
"""``methods[name](agent, params)``: the result of the client's request (an ACP type or
JSON data)."""
SessionHandler = Callable[["ScriptedAgent", int], Awaitable[None]]


class ScriptedAgent:
    """See the module docstring. ``run`` serves ``channel`` until the client closes it."""

    def __init__(
        self,
        channel: MemoryChannel,
        scenario: AgentScenario | None = None,
        *,
        on_prompt: PromptHandler | None = None,
        on_new_session: SessionHandler | None = None,
        methods: Mapping[str, MethodHandler] | None = None,
    ) -> None:
        self.channel = channel
        self.scenario = scenario or AgentScenario()
        self.on_prompt = on_prompt
        self.on_new_session = on_new_session
        """Called with each new session's number before it is answered."""
        self.methods = dict(methods or {})
        self.received: list[Any] = []
        """Every message the client sent, decoded, in order (answers too)."""
        self.problems: list[str] = []
        self.cancelled = anyio.Event()
        """Set on the first ``session/cancel``."""
        self.request_cancelled = anyio.Event()
        """Set on the first ``$/cancel_request``."""
        self.sessions = 0
        self._turns = deque(self.scenario.expanded_turns())
        self._prompts = 0
        self._turn_cancelled: dict[str, anyio.Event] = {}
        self.cwds: dict[str, str] = {}
        """Each session's folder, as its ``session/new`` said."""
        self._next_id = 0
        self._waiting: dict[int, anyio.Event] = {}
        self._answers: dict[int, dict[str, Any]] = {}
        self._send_lock = anyio.Lock()
        self._client_gone = False

    async def send(self, message: dict[str, Any]) -> None:
        """Send ``message`` (``jsonrpc`` added) as it is, ACP or not."""
        async with self._send_lock:
            await self.channel.send(_encoded(message))

    async def update(self, session_id: str, kind: str, /, **fields: Any) -> None:
        """Send the ``session/update`` of ``kind`` with ``fields`` (ACP's camelCase names)
        as its ACP type; `ScenarioError` for a kind, field or value ACP does not have."""
        await self._update(session_id, *session_update({"sessionUpdate": kind, **fields}))

    async def say(self, session_id: str, text: str) -> None:
        """An ``agent_message_chunk`` of ``text``."""
        chunk = acp.ContentChunk(content=acp.TextContent(text=text))
        await self._update(session_id, "agent_message_chunk", chunk)

    async def think(self, session_id: str, text: str) -> None:
        """An ``agent_thought_chunk`` of ``text``."""
        chunk = acp.ContentChunk(content=acp.TextContent(text=text))
        await self._update(session_id, "agent_thought_chunk", chunk)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        """Ask the client ``method`` (``params``: an ACP type or JSON data); its whole
        answer, ``{"result": ...}`` or ``{"error": ...}``."""
        request_id = self._next_id
        self._next_id += 1
        self._waiting[request_id] = done = anyio.Event()
        await self.send({"id": request_id, "method": method, "params": params})
        if self._client_gone:
            self._no_answer(request_id)
        await done.wait()
        return self._answers.pop(request_id)

    async def answer(self, method: str, params: dict[str, Any]) -> Any:
        """The result of the client's request ``method``; override it (or give ``methods``)
        to answer more. Raise `ScriptedError` to answer with an error instead."""
        if method == "initialize":
            return acp.InitializeResponse(
                protocol_version=acp.PROTOCOL_VERSION,
                agent_info=self.scenario.agent_info,
                agent_capabilities=self.scenario.agent_capabilities,
            )
        if method == "session/new":
            number = self.sessions
            self.sessions += 1
            if self.on_new_session is not None:
                await self.on_new_session(self, number)
            session_id = f"s{number}"
            self.cwds[session_id] = str(params.get("cwd", ""))
            return acp.NewSessionResponse(session_id=session_id, modes=self.scenario.modes)
        if method == "session/prompt":
            try:
                prompt = msgspec.convert(params, acp.PromptRequest)
            except msgspec.ValidationError as exc:
                raise ScriptedError(f"Invalid params: {exc}", code=INVALID_PARAMS) from exc
            return await self._prompt(prompt.session_id, params)
        if method in self.methods:
            return await self.methods[method](self, params)
        if method == "session/set_mode":
            modes = self.scenario.modes.available_modes if self.scenario.modes else []
            if params.get("modeId") not in {mode.id for mode in modes}:
                raise ScriptedError(f"no mode {params.get('modeId')!r}", code=INVALID_PARAMS)
            return {}
        raise ScriptedError(f"Method not found: {method}", code=METHOD_NOT_FOUND)

    async def respond(self, message: dict[str, Any]) -> None:
        """Answer the client's request ``message`` with `answer`'s result; override it to
        send more around the answer, or none. Raise `ScriptedError` to answer with an
        error."""
        result = await self.answer(str(message["method"]), message.get("params") or {})
        await self.send({"id": message["id"], "result": result})

    async def run(self, *, finish: bool = False) -> None:
        """Answer the client until it closes its side, then close ours. ``finish``: first
        answer what it asked to the end, without it (what the agent asks it fails at once,
        and an ``await_cancel`` returns), as for a client that writes everything, then
        closes; else stop at once."""
        async with anyio.create_task_group() as tg:
            while data := await self.channel.receive():
                try:
                    message = json.loads(data)
                except ValueError:
                    await self._refuse(PARSE_ERROR, "Parse error: not JSON")
                    continue
                self.received.append(message)
                params = message.get("params") if isinstance(message, dict) else None
                if not isinstance(message, dict) or not isinstance(params or {}, dict):
                    await self._refuse(INVALID_REQUEST, f"Invalid request: {message!r}")
                elif "method" not in message:
                    self._take_answer(message)
                elif message["method"] == "session/cancel":
                    self.cancelled.set()
                    if turn := self._turn_cancelled.get(str((params or {}).get("sessionId"))):
                        turn.set()
                elif message["method"] == "$/cancel_request":
                    self.request_cancelled.set()
                elif "id" in message:
                    tg.start_soon(self._respond, message)
            if finish:
                self._go_on_without_the_client()
            else:
                tg.cancel_scope.cancel()
        await self.channel.close(0)

    def _go_on_without_the_client(self) -> None:
        self._client_gone = True
        for turn in self._turn_cancelled.values():
            turn.set()
        for request_id in list(self._waiting):
            self._no_answer(request_id)

    def _no_answer(self, request_id: int) -> None:
        if waiting := self._waiting.pop(request_id, None):
            self._answers[request_id] = {"id": request_id, "error": _GONE}
            waiting.set()

    async def _refuse(self, code: int, message: str) -> None:
        """Answer what is no request (its id unknown, as JSON-RPC says: ``null``)."""
        self.problems.append(message)
        await self.send({"id": None, "error": {"code": code, "message": message}})

    def _take_answer(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        waiting = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if waiting is None:
            self.problems.append(f"an answer to no request of ours: {message!r}")
            return
        self._answers[message["id"]] = message
        waiting.set()

    async def _respond(self, message: dict[str, Any]) -> None:
        try:
            await self.respond(message)
        except ScriptedError as exc:
            await self.send({"id": message["id"], "error": exc.error()})

    async def _update(self, session_id: str, kind: str, update: msgspec.Struct) -> None:
        # `acp.SessionNotification` keeps its update raw (the kind says its type), so the
        # typed update goes in as its JSON object, tagged.
        fields = {"sessionUpdate": kind, **msgspec.to_builtins(update)}
        params = {"sessionId": session_id, "update": fields}
        await self.send({"method": "session/update", "params": params})

    async def _prompt(self, session_id: str, params: dict[str, Any]) -> acp.PromptResponse:
        self._prompts += 1
        cancelled = self._turn_cancelled[session_id] = anyio.Event()
        if self._client_gone:
            cancelled.set()
        try:
            if self.on_prompt is not None:
                return acp.PromptResponse(
                    stop_reason=await self.on_prompt(self, session_id, params)
                )
            if not self.scenario.turns:
                return acp.PromptResponse(stop_reason="end_turn")
            if not self._turns:
                problem = f"prompt {self._prompts} (session {session_id}): no turn left"
                self.problems.append(problem)
                raise ScriptedError(f"scripted agent: {problem}", code=INTERNAL_ERROR)
            turn = self._turns.popleft()
            await play(self, session_id, turn.steps, cancelled)
            stop = "cancelled" if cancelled.is_set() else turn.stop_reason
            return acp.PromptResponse(stop_reason=stop, usage=turn.usage)
        finally:
            if self._turn_cancelled.get(session_id) is cancelled:
                del self._turn_cancelled[session_id]


class _StdioAgent(ScriptedAgent):
    """Receives through its channel, and writes to ``stdout`` itself: what it sent is out
    even when the channel closes right after."""

    def __init__(self, channel: MemoryChannel, scenario: AgentScenario, stdout: BinaryIO) -> None:
        super().__init__(channel, scenario)
        self._out = anyio.wrap_file(stdout)
        self._reading = True

    async def send(self, message: dict[str, Any]) -> None:
        async with self._send_lock:
            if not self._reading:
                return
            try:
                await self._out.write(_encoded(message) + b"\n")
                await self._out.flush()
            except BrokenPipeError:  # the client stopped reading: its stdin ends too
                self._reading = False


async def serve_stdio(scenario: AgentScenario, stdin: BinaryIO, stdout: BinaryIO) -> list[str]:
    """Play ``scenario`` to the client on ``stdin`` and ``stdout`` (a JSON-RPC message a
    line, as ACP over stdio) until ``stdin`` ends and what it asked is answered (see
    `ScriptedAgent.run`'s ``finish``); the agent's `problems`."""
    near, far = memory_channel_pair()
    agent = _StdioAgent(far, scenario, stdout)
    async with near, far, anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(agent.run, finish=True))
        async for line in anyio.wrap_file(stdin):
            await near.send(line)
        await near.close(math.inf)  # the agent closes its end once it finished
    return agent.problems


def _encoded(message: dict[str, Any]) -> bytes:
    return json.dumps(msgspec.to_builtins({"jsonrpc": "2.0", **message})).encode()


_GONE = {"code": INTERNAL_ERROR, "message": "no answer: the client closed its side"}
"""What a request to a client that is gone gets (`ScriptedAgent.run`'s ``finish``)."""


@asynccontextmanager
async def scripted_client(
    options: AcpOptions | None = None,
    *,
    scenario: AgentScenario | None = None,
    on_prompt: PromptHandler | None = None,
    on_new_session: SessionHandler | None = None,
    methods: Mapping[str, MethodHandler] | None = None,
    **client_args: Any,
) -> AsyncIterator[tuple[AcpClient, ScriptedAgent]]:
    """gemwire's `AcpClient` (``options``, ``client_args``) on a `ScriptedAgent` in this
    process, both running."""
    client_end, agent_end = memory_channel_pair()
    agent = ScriptedAgent(
        agent_end, scenario, on_prompt=on_prompt, on_new_session=on_new_session, methods=methods
    )
    async with agent_end, client_end, anyio.create_task_group() as tg:
        tg.start_soon(agent.run)
        async with AcpClient(options or AcpOptions(), channel=client_end, **client_args) as client:
            yield client, agent
        tg.cancel_scope.cancel()
