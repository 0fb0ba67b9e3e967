"""How Gemini CLI says a run failed, as normalized error kinds (docs/events.md, error kinds).

Shared by the stream-json and json reducers: the fatal error types, the exit codes
(docs/gemini-cli.md#exit-codes) and the API error messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from gemwire.events import TurnError

__all__ = (
    "FATAL_KINDS",
    "INELIGIBLE_HINT",
    "TURN_CUT_SHORT",
    "api_error_kind",
    "error_kind_for_exit_code",
    "explained",
    "missing_result_error",
    "retry_delay_in",
    "stderr_explanation",
    "stop_reason_for",
)

# Warnings after which Gemini ends the turn early; its ACP mode reports both as
# max_turn_requests, and so do we.
TURN_CUT_SHORT = ("Loop detected", "Maximum session turns exceeded")

FATAL_KINDS = {
    "FatalTurnLimitedError": "turn_limit",
    "FatalAuthenticationError": "auth",
    "FatalInputError": "input",
    "FatalConfigError": "config",
    "FatalSandboxError": "config",
    "FatalUntrustedWorkspaceError": "untrusted",
    "FatalToolExecutionError": "agent",
    "FatalCancellationError": "cancelled",
}

_EXIT_KINDS = {
    41: "auth",
    42: "input",
    44: "config",
    52: "config",
    53: "turn_limit",
    54: "agent",
    55: "untrusted",
    130: "cancelled",
    145: "auth",  # HTTP 401 & 0xFF
    147: "auth",  # HTTP 403 & 0xFF
    173: "rate_limited",  # HTTP 429 & 0xFF
}

_HTTP_CODE = re.compile(r'"code":\s*(\d{3})')


def error_kind_for_exit_code(exit_code: int) -> str:
    """The failure kind Gemini CLI's exit code stands for (docs/gemini-cli.md#exit-codes)."""
    if exit_code in _EXIT_KINDS:
        return _EXIT_KINDS[exit_code]
    if exit_code < 0:  # killed by a signal
        return "crashed"
    # API errors exit with the HTTP status truncated to 8 bits (400..511 -> 144..255).
    return "api" if exit_code >= 144 else "agent"


# Gemini CLI's TerminalQuotaError (classifyGoogleError): a quota that retrying won't fix.
_TERMINAL_QUOTA = re.compile(
    r"TerminalQuotaError|exhausted your daily quota|exhausted your capacity|capacity exceeded"
    r"|MODEL_CAPACITY_EXHAUSTED|QUOTA_EXHAUSTED|INSUFFICIENT_G1_CREDITS_BALANCE",
    re.IGNORECASE,
)


def api_error_kind(message: str) -> str:
    match = _HTTP_CODE.search(message)
    code = int(match.group(1)) if match else None
    if _TERMINAL_QUOTA.search(message):
        return "quota"
    if code == 429 or "Resource has been exhausted" in message:
        return "rate_limited"
    if code in (401, 403) or "API key not valid" in message:
        return "auth"
    return "api"


def missing_result_error(exit_code: int | None) -> TurnError:
    """Why a run failed that ended without its result (document or event)."""
    if exit_code is None:
        return TurnError(kind="protocol", message="the stream ended without a result")
    if exit_code == 0:
        return TurnError(kind="crashed", message="the agent exited without a result", exit_code=0)
    return TurnError(
        kind=error_kind_for_exit_code(exit_code),
        message=f"the agent exited with code {exit_code} without a result",
        exit_code=exit_code,
    )


def stop_reason_for(kind: str) -> str:
    """The ``stop_reason`` of a turn that failed with error ``kind``."""
    return {"turn_limit": "max_turn_requests", "cancelled": "cancelled"}.get(kind, "error")


# How a retry delay is worded: Gemini CLI's "Suggested retry after 7s." (from Google's
# RetryInfo), the API's "Please retry in 7.5s.", the RetryInfo detail itself, and Code
# Assist's "Your quota will reset after 2h52m39s." (the quota's reset, for ``quota``).
_RETRY_DELAY = re.compile(
    r'(?:Suggested retry after |Please retry in |quota will reset after |"retryDelay":\s*")'
    r"(\d+(?:\.\d+)?(?:h|ms|m|s)(?:\d+(?:\.\d+)?(?:ms|m|s))*)\b"
)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def retry_delay_in(text: str) -> float | None:
    """The retry delay, in seconds, that ``text`` (an error message or stderr) names last."""
    found = _RETRY_DELAY.findall(text)
    if not found:
        return None
    return sum(float(n) * _SECONDS[unit] for n, unit in _DURATION_PART.findall(found[-1]))


# Lines Gemini CLI prints on stderr that explain nothing about a failure.
_NOISE = re.compile(
    r"^(Warning: 256-color support|Ripgrep is not available|Loaded cached credentials"
    r"|Attempt \d+ failed|Suggested retry after|Data collection is disabled|\s+at )"
)
_EXPLANATION_LINES = 3


def stderr_explanation(lines: Sequence[str]) -> str | None:
    """Gemini CLI's own words on why it stopped, from its stderr: the first lines that are
    not noise, up to a blank line or its usage text (at most three, leading spaces gone)."""
    kept: list[str] = []
    for line in lines:
        text = line.strip()
        if kept and (not text or text.startswith("Usage: ") or len(kept) == _EXPLANATION_LINES):
            break
        if text and not _NOISE.match(line):
            kept.append(text)
    return "\n".join(kept)[:2000] or None


INELIGIBLE_HINT = (
    "Google no longer serves this account's tier in Gemini CLI (IneligibleTierError). Use an "
    "API key (GEMINI_API_KEY) or Vertex AI, or Antigravity CLI: "
    "https://antigravity.google/docs/cli-getting-started"
)
_INELIGIBLE = re.compile(r"IneligibleTierError:?\s*(.*)")

# Kinds that say less than "rate limited" when the CLI was retrying 429s as the run ended.
_VAGUE_KINDS = frozenset({"agent", "crashed", "protocol", "timeout"})


def explained(
    error: TurnError, stderr: Sequence[str], *, exit_code: int | None, retrying: str | None
) -> TurnError:
    """``error`` with what stderr tells: the account is ineligible; Gemini's own
    explanation of a run without a result; that it was retrying 429s (``retrying``: the
    last "Attempt N failed" line) when it ended; the retry delay Google suggested."""
    ineligible = next((m for line in stderr if (m := _INELIGIBLE.search(line))), None)
    if ineligible is not None and error.kind not in ("cancelled", "timeout"):
        reason = ineligible.group(1).strip()
        message = f"{reason}\n{INELIGIBLE_HINT}" if reason else INELIGIBLE_HINT
        return msgspec.structs.replace(error, kind="ineligible", message=message)
    if exit_code is not None and exit_code > 0 and error == missing_result_error(exit_code):
        explanation = stderr_explanation(stderr)
        if explanation:
            error = msgspec.structs.replace(error, message=explanation)
    if retrying is not None and error.kind in _VAGUE_KINDS:
        kind = "quota" if _TERMINAL_QUOTA.search("\n".join(stderr)) else "rate_limited"
        message = f"rate limited: Gemini CLI was retrying ({retrying}) when the run ended"
        error = msgspec.structs.replace(error, kind=kind, message=f"{message}: {error.message}")
    if error.kind == "rate_limited" and _TERMINAL_QUOTA.search(error.message):
        error = msgspec.structs.replace(error, kind="quota")
    if error.kind in ("rate_limited", "quota") and not error.retry_delay:
        delay = retry_delay_in(error.message) or retry_delay_in("\n".join(stderr))
        if delay is not None:
            error = msgspec.structs.replace(error, retry_delay=delay)
    return error
