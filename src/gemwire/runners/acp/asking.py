"""A permission preset holds whatever the agent's own default mode: the agent is made to ask.

A preset (or a callback) only answers what an agent asks, and some agents' default modes
never ask: claude-agent-acp 0.101's ``auto`` and codex-acp 2.6's ``agent`` wrote files under
``--permissions deny``. So when a session's answers are not "allow everything" (a preset
other than ``all``, or a permission callback: ``gemwire serve`` and ``batch`` always have
one), gemwire puts each session it opens into the mode of `ASKING` that asks before acting,
and checks the agent's answer says it took it. Agents that have no such mode are made to
ask when they are started instead (`asking_launch`: OpenCode's permissions, codex-acp
0.16's approval policy). An agent gemwire cannot make ask (the asking mode is not offered,
or it did not take it, or it was started in a way gemwire could not change) is refused
with `PermissionsUnenforceable`, before any prompt.

An agent gemwire does not know is refused the same way: which of its modes asks, if any,
is not something ACP says, and a preset that silently does nothing is worse than none.
gemwire's own agents are known: the scripted agent of `gemwire.testing` (``scripted``; it
only does what its scenario says, and asks where the scenario asks) and Antigravity's
adapter.

``AcpOptions.mode`` (``--mode``) overrides: the session is put in that mode, chosen by the
user, and gemwire no longer makes sure the agent asks; the preset answers what the agent
asks in that mode.

    >>> ASKING["acp:@agentclientprotocol/codex-acp"].mode
    'read-only'
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from gemwire.errors import GemwireError, PermissionsUnenforceable
from gemwire.runners.acp.process_channel import AgentLaunch
from gemwire.runners.agents import AgentRelease, launched_release

if TYPE_CHECKING:
    from gemwire.runners.acp.session import AcpSession

__all__ = ("ASKING", "Asking", "asking_launch", "hold_asking_mode")


class Asking(msgspec.Struct, frozen=True, kw_only=True):
    """How one agent release is made to ask before it acts."""

    mode: str | None = None
    """The session mode (or value of its ``category: "mode"`` config option) that asks."""
    args: tuple[str, ...] = ()
    """Or: what its command gets, when no mode asks."""
    env: dict[str, str] = {}
    """Or: what its environment gets, when no mode asks."""
    measured: str
    """Which of its modes ask, as measured (docs/agents.md has the table)."""


_OPENCODE_ASKS = json.dumps(
    {"edit": "ask", "bash": "ask", "webfetch": "ask", "external_directory": "ask"},
    separators=(",", ":"),
)

ASKING: dict[str, Asking] = {
    "acp:@agentclientprotocol/claude-agent-acp": Asking(
        mode="default",
        measured="asks in default; auto (its default) and bypassPermissions never ask, "
        "acceptEdits edits without asking",
    ),
    "acp:@zed-industries/claude-code-acp": Asking(
        mode="default",
        measured="asks in default (its default); acceptEdits, dontAsk and bypassPermissions do not",
    ),
    "acp:@agentclientprotocol/codex-acp": Asking(
        mode="read-only",
        measured="asks in read-only; workspace-write writes the workspace without asking, "
        "agent (its default) and agent-full-access never ask",
    ),
    # No modes: it asks as approval_policy says, which a user's config.toml may set to never.
    "acp:codex-acp": Asking(
        args=("-c", 'approval_policy="untrusted"'),
        measured="no modes; asks with approval_policy untrusted, which gemwire passes",
    ),
    "acp:qwen-code": Asking(
        mode="default",
        measured="asks in default (its default unless settings say otherwise); auto-edit, "
        "auto and yolo do not",
    ),
    # Its modes (build, plan) are agents; whether build asks is its permission config,
    # which OPENCODE_PERMISSION overrides.
    "acp:OpenCode": Asking(
        env={"OPENCODE_PERMISSION": _OPENCODE_ASKS},
        measured="modes build and plan; asks as its permission config says, which gemwire "
        "sets to ask (OPENCODE_PERMISSION)",
    ),
    "acp:gemini-cli": Asking(
        mode="default", measured="asks in default (its default); autoEdit and yolo do not"
    ),
    "acp:antigravity": Asking(
        mode="default",
        measured="asks in default (its default); confirm_run_command asks for commands "
        "only, allow_all never asks, read_only denies without asking",
    ),
    "acp:scripted": Asking(
        mode="default",
        measured="gemwire's test agent: it does what its scenario says, and asks where "
        "the scenario asks; default is the mode it offers",
    ),
}
"""By an agent's ``agent`` field (``acp:`` and its ``agentInfo.name``): every release of
every built-in agent."""


def _rule(release: AgentRelease | None) -> Asking | None:
    return ASKING.get(release.identity) if release is not None else None


def asking_launch(launch: AgentLaunch) -> AgentLaunch:
    """``launch``, made to ask where the agent it starts is one of those that are made to
    ask when started (`Asking.args`, `Asking.env`); else as it is. Harmless when the
    answers allow everything: the agent asks, and is allowed."""
    rule = _rule(launched_release(launch.command))
    if rule is None or not (rule.args or rule.env):
        return launch
    return msgspec.structs.replace(
        launch, command=(*launch.command, *rule.args), env={**launch.env, **rule.env}
    )


async def hold_asking_mode(
    session: AcpSession, *, asks: bool, override: str | None, command: Sequence[str]
) -> None:
    """Put ``session`` in the mode the user chose (``override``), else, when its answers
    ``asks`` (not "allow everything"), in its agent's asking mode, and check the agent
    took it.

    Raises `PermissionsUnenforceable` when the agent cannot be made to ask, or gemwire
    does not know how to make it; `AgentRequestFailed` when it refuses the user's mode.
    A session refused is let go (closed where the agent offers ``session/close``, and
    forgotten by the client): its agent may serve others, and keeps nothing of it.
    """
    try:
        await _hold(session, asks=asks, override=override, command=command)
    except BaseException:
        with anyio.move_on_after(_CLOSE_WAIT, shield=True):
            with contextlib.suppress(GemwireError):  # not offered, refused, or gone
                await session.close()
        session.context.forget(session.session_id)
        raise


async def _hold(
    session: AcpSession, *, asks: bool, override: str | None, command: Sequence[str]
) -> None:
    if override:
        # Every session the client opens, as the user chose: a batch's and a server's too.
        await session.set_mode(override)
        return
    if not asks:
        return
    agent = session.context.agent()
    rule = ASKING.get(agent)
    fix = "pass --mode (AcpOptions.mode) to run it in a mode of your choosing instead"
    if rule is None:
        raise PermissionsUnenforceable(_unknown(agent, _modes(session)))
    if rule.mode is None:
        started = _rule(launched_release(command))
        if started is not rule:
            raise PermissionsUnenforceable(
                f"{agent} has no mode that asks before acting; gemwire makes it ask by "
                f"starting it with {' '.join(rule.args) or _env_text(rule.env)}, which it "
                f"could not here (its command {list(command)!r} is not one gemwire knows "
                f"as {agent}): run it by name, or {fix}"
            )
        return
    offered = _modes(session)
    if not offered:
        # The answer names no modes (a load answered with nothing): nothing to switch or
        # check; every measured release names them in each answer that opens a session.
        return
    if rule.mode not in offered:
        raise PermissionsUnenforceable(
            f"{agent} offers no mode {rule.mode!r}, the one that asks before acting "
            f"(its modes: {', '.join(offered) or 'none'}), so gemwire cannot make it ask: {fix}"
        )
    if _current_mode(session) == rule.mode:
        return
    option = _mode_option(session)
    if option is not None:  # its answer holds every option's current value: checkable
        await session.set_config_option(str(option["id"]), rule.mode)
    else:  # answered with nothing but success, which says the mode was taken
        await session.set_mode(rule.mode)
    now = _current_mode(session)
    if now != rule.mode:
        raise PermissionsUnenforceable(
            f"{agent} was asked for mode {rule.mode!r}, which asks before acting, and "
            f"answered that it is in {now!r}: {fix}"
        )


_CLOSE_WAIT = 5.0
"""Seconds an agent has to answer the ``session/close`` of a session refused."""


def _unknown(agent: str, offered: list[str]) -> str:
    why = (
        f"{agent} is not an agent gemwire knows the modes of, so it cannot make sure the "
        "agent asks before acting (a permission preset answers only what an agent asks)"
    )
    if not offered:
        return f"{why}, and it names no modes to choose from: --permissions all allows everything"
    return (
        f"{why}: pass --mode (AcpOptions.mode) with the one of its modes ({', '.join(offered)}) "
        "you choose to run it in, or --permissions all to allow everything"
    )


def _env_text(env: dict[str, str]) -> str:
    return " ".join(f"{key}={value}" for key, value in env.items())


def _mode_option(session: AcpSession) -> dict[str, Any] | None:
    return next((o for o in session.config_options or [] if o.get("category") == "mode"), None)


def _modes(session: AcpSession) -> list[str]:
    """The session's modes: ``modes.availableModes``, else its mode config option's values."""
    if session.modes is not None:
        return [mode.id for mode in session.modes.available_modes]
    option = _mode_option(session)
    values = option.get("options") if option is not None else None
    return [str(v.get("value")) for v in values or [] if isinstance(v, dict)]


def _current_mode(session: AcpSession) -> str | None:
    """The mode the agent last said the session is in: its mode config option's current
    value where it has one (set_config_option answers with it), else ``currentModeId``."""
    option = _mode_option(session)
    if option is not None and isinstance(option.get("currentValue"), str):
        return str(option["currentValue"])
    return session.current_mode_id
