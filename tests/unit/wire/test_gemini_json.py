"""Every --output-format json document the pinned CLIs printed fits the wire types exactly."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from kit.corpus import RECORDINGS

from gemwire.protocol._strict import unknown_fields
from gemwire.wire.gemini_json import JsonError, JsonOutput

RUNS = sorted(RECORDINGS.glob("*/*/json/run-*.stdout"))


def documents(stdout: Path) -> list[str]:
    """The JSON document(s) of a run: stdout, or on fatal errors (0.61.0) stderr."""
    if stdout.read_bytes().strip():
        return [stdout.read_text()]
    lines = stdout.with_suffix(".stderr").read_text().split("\n")
    # Pretty-printed at column 0; a second copy may be prefixed with "[ERROR] ".
    starts = [i for i, line in enumerate(lines) if line in ("{", "[ERROR] {")]
    return ["\n".join(["{", *lines[i + 1 : lines.index("}", i) + 1]]) for i in starts]


@pytest.mark.parametrize("run", RUNS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.stem}")
def test_document_decodes_with_no_unknown_fields(run: Path) -> None:
    for document in documents(run):
        msgspec.json.decode(document, type=JsonOutput)
        assert unknown_fields(msgspec.json.decode(document), JsonOutput) == []


def test_fatal_errors_go_to_stderr_and_turn_limit_is_printed_twice() -> None:
    (max_turns,) = [r for r in RUNS if r.parts[-4:-2] == ("0.61.0", "max_session_turns")]
    assert max_turns.read_bytes() == b""
    decoded = [msgspec.json.decode(d, type=JsonOutput) for d in documents(max_turns)]
    message = (
        "Reached max session turns for this session. Increase the number of turns by "
        "specifying maxSessionTurns in settings.json."
    )
    assert [d.error for d in decoded] == [
        JsonError(type="FatalTurnLimitedError", message=message, code=53)
    ] * 2


def test_response_keeps_only_the_last_model_turn() -> None:
    """Why normalized `answer` does not come from here: the text before a tool call is gone."""
    (run,) = [r for r in RUNS if r.parts[-4:-2] == ("0.61.0", "write_and_shell")]
    (document,) = documents(run)
    assert msgspec.json.decode(document, type=JsonOutput).response == "Done. File written."


def test_every_run_has_a_document() -> None:
    missing = [str(r.relative_to(RECORDINGS)) for r in RUNS if not documents(r)]
    # 0.15.4 refuses --resume with a stdin-only prompt before it prints anything.
    assert missing == ["0.15.4/resume/json/run-2.stdout"]
