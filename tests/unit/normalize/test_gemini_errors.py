"""What Gemini CLI's stderr adds to a failed run's error (issue 11 items 5 and 6)."""

from __future__ import annotations

import msgspec
import pytest

from gemwire._normalize.gemini_errors import (
    INELIGIBLE_HINT,
    api_error_kind,
    explained,
    missing_result_error,
    retry_delay_in,
    stderr_explanation,
)
from gemwire.events import TurnError

# Gemini CLI 0.61.0's stderr, as observed against the scripted model (probe runs).
NOISE = [
    (
        "Warning: 256-color support not detected. Using a terminal with at least 256-color "
        "support is recommended for a better visual experience."
    ),
    "Ripgrep is not available. Falling back to GrepTool.",
]
BAD_RESUME = [
    'Error resuming session: Invalid session identifier "x".',
    "  Searched for sessions in /h/.gemini/tmp/workspace/chats.",
    (
        "  Use --list-sessions to see available sessions, then use --resume {number}, "
        "--resume {uuid}, or --resume latest."
    ),
    "",
]
RETRYING = [
    "Attempt 1 failed: Resource has been exhausted (e.g. check quota).",
    "Suggested retry after 7s.. Retrying after 8088ms...",
]


def test_the_explanation_skips_noise_and_keeps_the_message_lines() -> None:
    assert stderr_explanation([*NOISE, *BAD_RESUME]) == "\n".join(
        line.strip() for line in BAD_RESUME[:3]
    )


def test_the_explanation_stops_at_usage_text() -> None:
    lines = ["When resuming a session, you must provide a message", "Usage: gemini [options]"]
    assert stderr_explanation(lines) == "When resuming a session, you must provide a message"


def test_nothing_but_noise_explains_nothing() -> None:
    assert stderr_explanation([*NOISE, *RETRYING, ""]) is None


def test_a_missing_result_takes_the_explanation_and_keeps_kind_and_exit_code() -> None:
    error = explained(missing_result_error(42), BAD_RESUME, exit_code=42, retrying=None)
    assert error == TurnError(
        kind="input", message=stderr_explanation(BAD_RESUME) or "", exit_code=42
    )


def test_a_kill_is_not_explained_by_stderr() -> None:
    error = explained(missing_result_error(-9), BAD_RESUME, exit_code=-9, retrying=None)
    assert error == missing_result_error(-9)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("Suggested retry after 7s.. Retrying after 8088ms...", 7.0),
        ("Please retry in 1.5s.", 1.5),
        ('"retryDelay": "30s"', 30.0),
        ("Please retry in 250ms.", 0.25),
        ("Retrying after 8088ms...", None),  # gemini's own backoff, not Google's advice
        ("Your quota will reset after 2h52m39s.", 2 * 3600 + 52 * 60 + 39.0),
        ("Your quota will reset after 5m.", 300.0),
    ],
)
def test_retry_delays(text: str, seconds: float | None) -> None:
    assert retry_delay_in(text) == seconds


@pytest.mark.parametrize("kind", ["crashed", "timeout", "agent"])
def test_ending_while_retrying_429s_is_rate_limited_with_the_delay(kind: str) -> None:
    error = TurnError(kind=kind, message="the run took longer than 5 s", exit_code=-9)
    retrying = "Attempt 1 failed: Resource has been exhausted (e.g. check quota)"
    assert explained(error, [*NOISE, *RETRYING], exit_code=-9, retrying=retrying) == TurnError(
        kind="rate_limited",
        message=f"rate limited: Gemini CLI was retrying ({retrying}) when the run ended: "
        "the run took longer than 5 s",
        exit_code=-9,
        retry_delay=7.0,
    )


def test_a_cancelled_run_stays_cancelled_while_retrying() -> None:
    error = TurnError(kind="cancelled", message="interrupted (Ctrl-C)", exit_code=-15)
    assert explained(error, RETRYING, exit_code=-15, retrying="Attempt 1 failed") == error


def test_a_terminal_quota_is_quota() -> None:
    message = "[API Error: You have exhausted your daily quota on this model.]"
    assert api_error_kind(message) == "quota"
    error = TurnError(kind="rate_limited", message=message, exit_code=173)
    assert explained(error, [], exit_code=173, retrying=None).kind == "quota"


def test_an_ineligible_account_is_its_own_kind_with_upstream_s_hint() -> None:
    # Built from upstream's source, not recorded (it needs a Google account login):
    # gemini.tsx logs `debugLogger.error('Error authenticating:', err)`, and an
    # IneligibleTierError's message joins the tiers' reasonMessage (code_assist/setup.ts).
    stderr = [
        *NOISE,
        "Error authenticating: IneligibleTierError: This client is no longer supported.",
        "    at throwIneligibleOrProjectIdError (file:///x/chunk.js:311090:11)",
    ]
    error = explained(missing_result_error(41), stderr, exit_code=41, retrying=None)
    assert error == TurnError(
        kind="ineligible",
        message=f"This client is no longer supported.\n{INELIGIBLE_HINT}",
        exit_code=41,
    )


def test_a_quota_s_reset_time_is_its_retry_delay() -> None:
    # Code Assist's wording (login with Google), as users report it.
    message = (
        "[API Error: You have exhausted your capacity on this model. "
        "Your quota will reset after 2h52m39s.]"
    )
    error = TurnError(kind="api", message=message, exit_code=1)
    assert api_error_kind(message) == "quota"
    explained_error = explained(
        msgspec.structs.replace(error, kind=api_error_kind(message)), [], exit_code=1, retrying=None
    )
    assert (explained_error.kind, explained_error.retry_delay) == ("quota", 10359.0)
