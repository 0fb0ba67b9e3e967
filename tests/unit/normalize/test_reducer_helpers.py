"""The helpers every reducer shares: the answer's join and a recorded tool result."""

from __future__ import annotations

from typing import Any

import pytest

from gemwire._normalize.answer import Answer
from gemwire._normalize.gemini_tools import recorded_result


def answer_of(*steps: str | None) -> str:
    answer = Answer()
    for step in steps:
        if step is None:
            answer.tools_called()
        else:
            answer.add(step)
    return answer.text()


@pytest.mark.parametrize(
    ("steps", "text"),
    [
        (("Reading", ".", None, "Done."), "Reading.\n\nDone."),
        ((None, None, "Done."), "Done."),  # no text before the tools: no blank line
        (("A", None, None, "B", "C"), "A\n\nBC"),  # one blank line per model turn
        (("A", None), "A"),  # tools at the end add nothing
        (("", None, "B"), "\n\nB"),  # an empty text still counts as a model turn's
        ((), ""),
    ],
)
def test_answer_joins_model_turns_with_a_blank_line(
    steps: tuple[str | None, ...], text: str
) -> None:
    assert answer_of(*steps) == text


def test_answer_clear_starts_a_new_turn() -> None:
    answer = Answer()
    answer.add("old")
    answer.tools_called()
    answer.clear()
    answer.add("new")
    assert answer.text() == "new"


def _response(body: Any) -> dict[str, Any]:
    return {"functionResponse": {"id": "c1", "name": "read_file", "response": body}}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ("plain", ("plain", None)),
        ([_response({"output": "ok"})], ("ok", None)),
        (_response({"error": "boom"}), (None, "boom")),
        ([{"text": "x"}, _response({"output": 3, "error": "boom"})], (None, "boom")),
        ([_response("not a dict"), _response({"output": "second"})], ("second", None)),
        (None, (None, None)),
    ],
)
def test_recorded_result_reads_the_first_function_response(
    result: Any, expected: tuple[str | None, str | None]
) -> None:
    assert recorded_result(result) == expected
