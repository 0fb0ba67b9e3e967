"""One conversation in the bundled ``localharness``, through the google-antigravity SDK.

The only module that imports the SDK, and only when a conversation starts: importing it
takes ~2.7 s, which no other command pays. The SDK starts the harness (a static binary in
its wheel) and talks to it over a local WebSocket; `Harness` gives its steps as
`wire.antigravity.Step` and asks ``ask`` about every tool call (one ``ask_user`` policy for
all tools: the session's mode decides which to put to the client).

    async with Harness(settings, cwd, session_id, ask=ask) as harness:
        async for step in harness.turn("hello"):
            ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Self

import msgspec

from gemwire.antigravity.settings import Settings
from gemwire.errors import AgentFailed, RunCancelled
from gemwire.wire.antigravity import Step, UsageMetadata

if TYPE_CHECKING:
    from google.antigravity import Agent

__all__ = ("Ask", "Harness", "sdk_version")

Ask = Callable[[str, Mapping[str, Any]], Awaitable[bool]]
"""Whether a tool call (the SDK's tool name, the model's arguments) may run."""

_NETWORK_TOOLS = ("read_url_content", "search_web")


def sdk_version() -> str | None:
    """The installed google-antigravity's version, read without importing it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("google-antigravity")
    except PackageNotFoundError:
        return None


class Harness:
    """A running harness holding one conversation (new, or resumed from its database).

    Args:
        settings: the model and the home.
        cwd: the workspace.
        session_id: the conversation's id (its database is ``<save_dir>/<id>.db``).
        ask: decides each tool call.
        resume: continue the saved conversation; else start it (it must not exist).
        network_tools: offer the model ``read_url_content`` and ``search_web``.
    """

    def __init__(
        self,
        settings: Settings,
        cwd: str,
        session_id: str,
        *,
        ask: Ask,
        resume: bool = False,
        network_tools: bool = True,
    ) -> None:
        self.settings = settings
        self.cwd = cwd
        self.session_id = session_id
        self._ask = ask
        self._resume = resume
        self._network_tools = network_tools
        self._stack = AsyncExitStack()
        self._agent: Agent | None = None

    async def __aenter__(self) -> Self:
        try:
            from google.antigravity import Agent
        except ImportError as exc:
            raise AgentFailed(
                "google-antigravity is not installed: pip install 'gemwire[antigravity]'"
            ) from exc
        try:
            self._agent = await self._stack.enter_async_context(Agent(self._config()))
        except Exception as exc:  # the SDK raises RuntimeError, ValueError, its own errors
            raise AgentFailed(f"Antigravity's harness did not start: {exc}") from exc
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await self._stack.aclose()
        except Exception as exc:  # the harness exited with an error, or would not exit
            raise AgentFailed(f"Antigravity's harness did not end cleanly: {exc}") from exc

    def _config(self) -> Any:
        from google.antigravity import LocalAgentConfig, types
        from google.antigravity.hooks import policy

        async def ask(call: types.ToolCall, reason: str | None = None) -> bool:
            return await self._ask(str(call.name), dict(call.args))

        endpoint = types.GeminiAPIEndpoint(api_key=self.settings.api_key)
        if self.settings.base_url:
            endpoint = types.GeminiAPIEndpoint(
                api_key=self.settings.api_key, base_url=self.settings.base_url
            )
        # The image model too: without it the SDK adds one with no key, and the start fails.
        model = types.ModelTarget(
            name=self.settings.model,
            types=[types.ModelType.TEXT, types.ModelType.IMAGE],
            endpoint=endpoint,
        )
        disabled = [] if self._network_tools else [types.BuiltinTools(t) for t in _NETWORK_TOOLS]
        mode = types.SessionContinuationMode
        return LocalAgentConfig(
            models=[model],
            policies=[policy.ask_user("*", handler=ask)],
            workspaces=[self.cwd],
            save_dir=self.settings.save_dir,
            app_data_dir=self.settings.app_data_dir,
            conversation_id=self.session_id,
            session_continuation_mode=mode.RESUME if self._resume else mode.CREATE_ONLY,
            capabilities=types.CapabilitiesConfig(disabled_tools=disabled or None),
        )

    @property
    def _conversation(self) -> Any:
        assert self._agent is not None, "used outside its context"
        return self._agent.conversation

    async def turn(self, prompt: str) -> AsyncIterator[Step]:
        """The steps of one turn, as they change, to the end of the turn.

        Raises `RunCancelled` when the turn was cancelled (`cancel`).
        """
        from google.antigravity import types

        try:
            await self._conversation.send(prompt)
            async for step in self._conversation.receive_steps():
                yield _step(step)
        except types.AntigravityCancelledError as exc:
            # A subclass of asyncio.CancelledError: said as ours, never as a cancellation
            # of the task that awaits the turn.
            raise RunCancelled("cancelled") from exc
        except Exception as exc:  # the connection lost, the harness gone: the SDK's errors
            raise AgentFailed(f"Antigravity's harness failed: {exc}") from exc

    def history(self) -> list[Step]:
        """The steps of the conversation so far (a resumed one's saved steps)."""
        return [_step(step) for step in self._conversation.history]

    def queued_steps(self) -> int:
        """Steps the SDK has received that `turn` has not yet given."""
        # Private in 0.1.22 (pinned): the step queue the connection fills as frames arrive.
        processor = getattr(self._conversation.connection, "_processor", None)
        queue = getattr(processor, "step_queue", None)
        return queue.qsize() if queue is not None else 0

    def total_usage(self) -> UsageMetadata:
        return msgspec.convert(self._conversation.total_usage.model_dump(), UsageMetadata)

    async def cancel(self) -> None:
        try:
            await self._conversation.cancel()
        except Exception as exc:
            raise AgentFailed(f"Antigravity's harness did not take the cancel: {exc}") from exc


def _step(step: Any) -> Step:
    return msgspec.convert(step.model_dump(mode="json", exclude={"usage_metadata"}), Step)
