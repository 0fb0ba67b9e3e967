"""The exit statuses are documented exactly as the code has them, and every kind is explained."""

from __future__ import annotations

import re
from pathlib import Path

from gemwire.cli import exit_codes
from gemwire.errors import RUN_FAILURES
from gemwire.events import ERROR_KINDS, TurnCompleted, TurnError

DOCS = Path(__file__).resolve().parents[3] / "docs"


def table(doc: str, heading: str) -> list[list[str]]:
    text = (DOCS / doc).read_text().split(heading, 1)[1]
    rows = re.findall(r"^\|(.+)\|$", text, re.MULTILINE)
    return [[cell.strip() for cell in row.split("|")] for row in rows[2:]]


def test_the_documented_statuses_are_the_code_s() -> None:
    documented: dict[int, str] = {
        int(row[0]): row[1] for row in table("cli.md", "## Exit statuses")
    }
    kinds = {
        kind: int(status)
        for status, meaning in documented.items()
        for kind in re.findall(r"error kind `(\w+)`", meaning)
    }
    assert kinds == exit_codes.FAILED_TURN
    constants = {value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    assert set(documented) == constants


def test_every_error_kind_is_explained_with_its_exception_and_status() -> None:
    rows = {row[0].strip("`"): row for row in table("failures.md", "# When a run fails")}
    assert list(rows) == list(ERROR_KINDS)
    for kind, row in rows.items():
        assert int(row[3]) == exit_codes.for_error_kind(kind)
        if kind in RUN_FAILURES:
            assert row[2].startswith(f"`{RUN_FAILURES[kind].__name__}`")


def test_a_turn_exits_0_or_with_the_status_of_its_error_kind() -> None:
    def turn(error: TurnError | None) -> TurnCompleted:
        return TurnCompleted(
            agent="gemini", ok=error is None, stop_reason="end_turn", error=error, answer=""
        )

    assert exit_codes.exit_status(turn(None)) == 0
    assert exit_codes.exit_status(turn(TurnError(kind="quota", message="m"))) == 7
    assert exit_codes.exit_status(turn(TurnError(kind="api", message="m"))) == 1
    no_kind = TurnCompleted(agent="gemini", ok=False, stop_reason="error", answer="")
    assert exit_codes.exit_status(no_kind) == 1
