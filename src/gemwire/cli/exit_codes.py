"""The exit statuses of ``gemwire`` commands: stable, documented in docs/cli.md.

Numbers are never reused or renumbered; new ones are only added. A failed turn exits with
the status of its error kind (`FAILED_TURN`), ``1`` for kinds without one of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gemwire.events import TurnError

__all__ = (
    "EXIT_AUTH",
    "EXIT_BROKEN_PIPE",
    "EXIT_BUDGET",
    "EXIT_CANCELLED",
    "EXIT_HANGUP",
    "EXIT_INELIGIBLE",
    "EXIT_IO",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_PROTOCOL",
    "EXIT_QUOTA",
    "EXIT_RATE_LIMITED",
    "EXIT_TERMINATED",
    "EXIT_TIMEOUT",
    "EXIT_TURN_FAILED",
    "EXIT_TURN_LIMIT",
    "EXIT_UNTRUSTED",
    "EXIT_USAGE",
    "FAILED_TURN",
    "exit_status",
    "for_error_kind",
)

EXIT_OK = 0
EXIT_TURN_FAILED = 1
"""The turn failed, for an error kind without a status of its own (the kind is in the output)."""
EXIT_USAGE = 2
"""Bad arguments, a bad config file (click's own status for usage errors)."""
EXIT_PROTOCOL = 3
"""``replay --strict`` met something outside the protocol."""
EXIT_NOT_FOUND = 4
"""The agent (Gemini CLI) was not found or is too old; also ``doctor`` finding a failure."""
EXIT_AUTH = 5
EXIT_RATE_LIMITED = 6
EXIT_QUOTA = 7
EXIT_TURN_LIMIT = 8
EXIT_UNTRUSTED = 9
EXIT_INELIGIBLE = 10
"""Gemini CLI's ``IneligibleTierError``: Google no longer serves the account's tier."""
EXIT_BUDGET = 11
"""A budget of ``gemwire run`` stopped the run (``--max-tool-calls``, ``--max-model-turns``):
the turn's kind is ``cancelled``, as for Ctrl-C, but nobody stopped it, so not 130."""
EXIT_IO = 74
"""As sysexits' EX_IOERR: ``batch`` could not read or write its output folder (a damaged
``results.jsonl``, a full disk); every finished result is still there."""
EXIT_TIMEOUT = 124
"""As timeout(1)."""
EXIT_HANGUP = 129
"""As a shell reports SIGHUP (128 + 1): the run was cancelled because the terminal closed."""
EXIT_CANCELLED = 130
"""As a shell reports Ctrl-C: the run was cancelled (Ctrl-C, or the caller)."""
EXIT_BROKEN_PIPE = 141
"""As a shell reports a program killed by SIGPIPE: the reader of stdout went away
(``gemwire run ... | head``); nothing is printed, and a run is stopped."""
EXIT_TERMINATED = 143
"""As a shell reports SIGTERM (128 + 15): the run was cancelled by ``timeout``, ``docker
stop``, systemd or a CI cancel."""

FAILED_TURN: dict[str, int] = {
    "not_found": EXIT_NOT_FOUND,
    "auth": EXIT_AUTH,
    "rate_limited": EXIT_RATE_LIMITED,
    "quota": EXIT_QUOTA,
    "turn_limit": EXIT_TURN_LIMIT,
    "untrusted": EXIT_UNTRUSTED,
    "ineligible": EXIT_INELIGIBLE,
    "timeout": EXIT_TIMEOUT,
    "cancelled": EXIT_CANCELLED,
}
"""Error kinds with an exit status of their own; every other kind exits `EXIT_TURN_FAILED`."""


def for_error_kind(kind: str | None) -> int:
    """The exit status of a turn that failed with ``kind`` (``None``: no kind was given).

    >>> for_error_kind("rate_limited"), for_error_kind("api"), for_error_kind(None)
    (6, 1, 1)
    """
    return FAILED_TURN.get(kind or "", EXIT_TURN_FAILED)


class Outcome(Protocol):
    """How a turn ended: `RunResult`, `AcpTurnResult`, the `TurnCompleted` event."""

    @property
    def ok(self) -> bool: ...

    @property
    def error(self) -> TurnError | None: ...


def exit_status(outcome: Outcome) -> int:
    """The exit status of a command whose turn ended with ``outcome``: 0 when it succeeded,
    else the status of its error kind (`for_error_kind`)."""
    if outcome.ok:
        return EXIT_OK
    return for_error_kind(outcome.error.kind if outcome.error else None)
