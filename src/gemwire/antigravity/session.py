"""One ACP session on one Antigravity conversation: prompts, permissions, cancel, modes.

A session owns a `Harness` (one harness process) from ``session/new`` (or ``load``,
``resume``) to ``session/close`` or the adapter's end. Every tool call the harness's policy
asks about comes to `AgentSession.ask`: the mode allows it, denies it, or puts it to the
client as ``session/request_permission`` (announced first as a pending ``tool_call``, so the
request names a call the client knows). A denial reaches the model as the tool's error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, suppress
from typing import Any

import anyio
import msgspec

from gemwire.antigravity.harness import Harness
from gemwire.antigravity.settings import MODES, Settings, decide
from gemwire.antigravity.tool_calls import ToolCalls, denied_update
from gemwire.antigravity.updates import TurnUpdates, history_updates
from gemwire.errors import AgentFailed, RunCancelled
from gemwire.wire import acp

__all__ = ("AgentSession", "Client", "SessionBusy", "TurnFailed")

_OPTIONS = [
    acp.PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    acp.PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    acp.PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]


class Client(msgspec.Struct, frozen=True, kw_only=True):
    """How a session reaches its client."""

    notify: Callable[[dict[str, Any]], Awaitable[None]]
    """Sends one ``session/update`` ``update``."""
    request_permission: Callable[[acp.RequestPermissionRequest], Awaitable[bytes]]
    """Asks, and returns the raw ``RequestPermissionResponse``."""


class SessionBusy(Exception):
    """A prompt came while the session's previous one runs."""


class TurnFailed(Exception):
    """A turn that ended in an error the harness reported (a model call that failed)."""


class AgentSession:
    def __init__(
        self,
        session_id: str,
        cwd: str,
        settings: Settings,
        client: Client,
        *,
        network_tools: bool,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.settings = settings
        self.mode = "default"
        self._client = client
        self._network_tools = network_tools
        self._calls = ToolCalls()
        self._always: set[str] = set()
        self._turn: TurnUpdates | None = None
        self._handling = False
        self._step_done = anyio.Event()
        self._cancelled = False
        self._stack = AsyncExitStack()
        self._harness: Harness | None = None

    async def start(self, *, resume: bool) -> None:
        """Raises `AgentFailed` when the harness does not start."""
        harness = Harness(
            self.settings,
            self.cwd,
            self.session_id,
            ask=self.ask,
            resume=resume,
            network_tools=self._network_tools,
        )
        self._harness = await self._stack.enter_async_context(harness)

    async def close(self) -> None:
        """Ends the harness (it exits 0); a running turn is cancelled first.

        Raises `AgentFailed` when the harness did not end cleanly (it is gone either way).
        """
        try:
            if self._turn is not None and self._harness is not None:
                await self.cancel()
        finally:
            self._harness = None
            await self._stack.aclose()

    def modes(self) -> acp.SessionModeState:
        return acp.SessionModeState(current_mode_id=self.mode, available_modes=list(MODES))

    def models(self) -> acp.SessionModelState:
        model = self.settings.model
        return acp.SessionModelState(
            current_model_id=model, available_models=[acp.ModelInfo(model_id=model, name=model)]
        )

    def set_mode(self, mode_id: str) -> bool:
        if mode_id not in {mode.id for mode in MODES}:
            return False
        self.mode = mode_id
        return True

    async def set_model(self, model_id: str) -> None:
        """The same conversation on another model: its harness restarted, resumed."""
        if model_id == self.settings.model:
            return
        await self.close()
        self.settings = msgspec.structs.replace(self.settings, model=model_id)
        self._stack = AsyncExitStack()
        await self.start(resume=True)

    async def replay(self) -> None:
        """The saved conversation, sent as updates (``session/load``)."""
        assert self._harness is not None
        for update in history_updates(self._harness.history()):
            await self._client.notify(update)

    async def prompt(self, text: str) -> acp.PromptResponse:
        """Raises `SessionBusy`, `TurnFailed`, or `AgentFailed`."""
        if self._turn is not None:
            raise SessionBusy("a prompt is running in this session")
        if self._harness is None:
            # The last turn failed and took its harness with it: the conversation goes on
            # in a new one, resumed from its database.
            await self.start(resume=True)
        assert self._harness is not None
        turn = TurnUpdates(self._calls, self._harness.total_usage())
        self._turn = turn
        self._cancelled = False
        failed = True
        try:
            async for step in self._harness.turn(text):
                self._handling = True
                for update in turn.step(step, self._harness.total_usage()):
                    await self._client.notify(update)
                self._handling = False
                self._step_done.set()
            for update in turn.finish(self._harness.total_usage()):
                await self._client.notify(update)
            failed = turn.error is not None and not self._cancelled
        except RunCancelled:
            failed = False
            return acp.PromptResponse(stop_reason="cancelled", usage=turn.usage())
        finally:
            self._turn = None
            self._handling = False
            self._step_done.set()
            if failed and not self._cancelled:  # a cancelled turn's harness goes on
                await self._end_harness()
        if self._cancelled:
            return acp.PromptResponse(stop_reason="cancelled", usage=turn.usage())
        if turn.error is not None:
            raise TurnFailed(turn.error)
        return acp.PromptResponse(stop_reason="end_turn", usage=turn.usage())

    async def _end_harness(self) -> None:
        """After a failed turn: the harness closes its connection once a turn fails (0.1.22),
        so the next prompt would get nothing and the one after wait for ever. It is ended
        here, and the next prompt starts another on the saved conversation."""
        stack, self._stack, self._harness = self._stack, AsyncExitStack(), None
        # It failed already (AgentFailed on its way out): the prompt's error says why.
        with anyio.CancelScope(shield=True), suppress(AgentFailed):
            await stack.aclose()

    async def cancel(self) -> None:
        if self._turn is None or self._harness is None:
            return
        self._cancelled = True
        await self._harness.cancel()

    async def _caught_up(self) -> None:
        """Until the steps the harness sent before it asked are sent to the client: the
        SDK hands a policy question to us at once, the steps before it wait in its queue."""
        assert self._harness is not None
        while self._turn is not None and (self._handling or self._harness.queued_steps()):
            self._step_done = anyio.Event()
            await self._step_done.wait()

    async def ask(self, tool: str, args: Mapping[str, Any]) -> bool:
        """Whether a call may run: by the mode, else by the client."""
        decision = "allow" if tool in self._always else decide(self.mode, tool)
        if decision == "allow":
            return True
        await self._caught_up()
        call = self._calls.asked(tool, args)
        await self._client.notify({"sessionUpdate": "tool_call", **msgspec.to_builtins(call)})
        if decision == "ask" and not self._cancelled:
            request = acp.RequestPermissionRequest(
                session_id=self.session_id,
                tool_call=msgspec.convert(msgspec.to_builtins(call), acp.ToolCallUpdate),
                options=_OPTIONS,
            )
            option = _chosen(await self._client.request_permission(request))
            if option in ("allow_once", "allow_always"):
                if option == "allow_always":
                    self._always.add(tool)
                return True
            message = "Denied by the user."
        else:
            message = f"Denied by mode {self.mode}."
        self._calls.denied(call.tool_call_id)
        if self._turn is not None:
            self._turn.denied()
        await self._client.notify(denied_update(call.tool_call_id, message))
        return False


def _chosen(result: bytes) -> str | None:
    try:
        outcome = msgspec.json.decode(result, type=acp.RequestPermissionResponse).outcome
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None  # an answer that cannot be read allows nothing
    return outcome.option_id if isinstance(outcome, acp.SelectedPermissionOutcome) else None
