"""Antigravity's transcript records -> events, and its databases' protobuf blobs, for any
input: every call started finishes exactly once, nothing raises, a blob that is not protobuf
reads as nothing."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from gemwire.events import ToolCallFinished, ToolCallStarted, UsageReported
from gemwire.sessions.antigravity._events import TranscriptNormalizer
from gemwire.sessions.antigravity._store import (
    _fields,
    _file_uri,
    _packed,
    database_problem,
    models_of,
    workspace_of,
)
from gemwire.wire.antigravity import TranscriptRecord, TranscriptToolCall

_TEXT = st.text(max_size=20)
_CALLS = st.lists(
    st.builds(
        TranscriptToolCall,
        name=st.sampled_from(["write_to_file", "replace_file_content", "run_command", "x"]),
        args=st.dictionaries(
            st.sampled_from(["TargetFile", "CommandLine", "Cwd", "toolAction"]),
            st.sampled_from(['"/w/a"', '"ls"', "5", "{", '["x"]']),
        ),
    ),
    max_size=3,
)
_RECORDS = st.lists(
    st.builds(
        TranscriptRecord,
        step_index=st.integers(0, 30),
        source=st.sampled_from(["MODEL", "USER_EXPLICIT", "SYSTEM", ""]),
        type=st.sampled_from(
            ["USER_INPUT", "PLANNER_RESPONSE", "CODE_ACTION", "RUN_COMMAND", "ERROR_MESSAGE", "?"]
        ),
        status=st.sampled_from(["DONE", "ERROR", "CANCELED", "RUNNING", ""]),
        content=_TEXT,
        thinking=_TEXT,
        error=_TEXT,
        tool_calls=_CALLS,
        input_tokens=st.none() | st.integers(0, 1000),
        output_tokens=st.none() | st.integers(0, 1000),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(_RECORDS, st.dictionaries(st.integers(0, 30), st.sampled_from(["m1", "m2"])))
def test_every_call_started_finishes_once(
    records: list[TranscriptRecord], models: dict[int, str]
) -> None:
    normalizer = TranscriptNormalizer("s", "/w", models)
    events = normalizer.start()
    for record in sorted(records, key=lambda r: r.step_index):
        events += normalizer.feed(record)
    events += normalizer.finish()
    started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
    finished = [e.call_id for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(finished) == sorted(started)
    assert len(set(started)) == len(started)
    counted = [r for r in records if r.type == "PLANNER_RESPONSE"]
    counted = [r for r in counted if r.input_tokens is not None or r.output_tokens is not None]
    assert len([e for e in events if isinstance(e, UsageReported)]) == len(counted)


@given(st.binary(max_size=200))
def test_any_blob_reads_without_raising(blob: bytes) -> None:
    _fields(blob)
    _file_uri(blob)
    _packed(blob)


def test_a_database_that_is_not_one_has_no_models(tmp_path: Path) -> None:
    database = tmp_path / "c.db"
    database.write_bytes(b"\x00" * 100)
    assert (models_of(database), workspace_of(database)) == ({}, None)
    assert database_problem(database) == f"{database}: file is not a database"
    assert database_problem(tmp_path / "none.db") == f"{tmp_path / 'none.db'}: no such file"
