"""Loading's fast path agrees with the general path, record for record.

`load_session` reads a file in blocks of lines and decodes message records straight into
their type; `RecordReplay.feed_general` decodes any line as JSON first and then looks at it.
Both must keep the same messages, originals, metadata, problems and verdicts: on every
recorded session, and on generated files (synthetic, named so) mixing every record kind with
broken lines, read in blocks of any size.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st
from kit.corpus import RECORDINGS

from gemwire.protocol.gemini_session import RecordReplay
from gemwire.sessions import read_session_info
from gemwire.sessions.gemini import _replay, load_session

RECORDED = sorted(p for p in RECORDINGS.glob("*/*/*/gemini-home/tmp/*/chats/**/*.jsonl"))


def general(data: bytes, *, summary: bool = False, keep_raw: bool = False) -> RecordReplay:
    """The general path alone, line by line, the way the loader numbers and reports lines."""
    replay = RecordReplay(summary=summary, keep_raw=keep_raw)
    *lines, tail = data.split(b"\n")
    for lineno, line in enumerate(lines, 1):
        replay.feed_general(line + b"\n", lineno)
    if tail:
        replay.feed_general(tail, len(lines) + 1, last=True)
    return replay


def assert_same(path: Path) -> None:
    data = path.read_bytes()
    for keep in (False, True):
        loaded = load_session(path, keep_originals=keep)
        reference = general(data, keep_raw=keep)
        assert loaded.messages == reference.messages
        assert loaded.problems == reference.problems
        assert loaded.originals == (reference.originals if keep else [])
        meta = reference.metadata
        assert (loaded.session_id, loaded.start_time, loaded.last_updated, loaded.summary) == (
            meta.get("sessionId"),
            meta.get("startTime"),
            meta.get("lastUpdated"),
            meta.get("summary"),
        )
        assert loaded.resumable == (reference.resumable and meta.get("kind") != "subagent")
    summary = general(data, summary=True)
    info = read_session_info(path)
    assert (info.messages, info.problems) == (len(summary.messages), len(summary.problems))
    assert info.resumable == (summary.resumable and summary.metadata.get("kind") != "subagent")


@pytest.mark.parametrize("block", [1, 64, _replay._BLOCK])
@pytest.mark.parametrize("path", RECORDED, ids=lambda p: str(p.relative_to(RECORDINGS)))
def test_recorded_sessions_load_the_same_on_both_paths(path: Path, block: int) -> None:
    with mock.patch.object(_replay, "_BLOCK", block):
        assert_same(path)


IDS = st.sampled_from("abcde")
TEXT = st.sampled_from(["hi", "", "  ", "/cmd", "<session_context>x", '"$rewindTo"', '{"id":'])


def message(mid: str, kind: str, text: str, odd: bool) -> dict[str, Any]:
    record: dict[str, Any] = {"id": mid, "timestamp": "t", "type": kind}
    if kind == "user":
        record["content"] = [{"text": text}]
    else:
        record["content"] = text
        record["toolCalls"] = [
            {"id": f"c-{mid}", "name": "write_file", "args": {"file_path": "f"},
             "status": "success", "timestamp": "t", "resultDisplay": text}
        ]  # fmt: skip
    if odd:
        record["tokens"] = "lots"  # not a TokensSummary: kept raw
    return record


MESSAGE = st.builds(message, IDS, st.sampled_from(["user", "gemini", "info"]), TEXT, st.booleans())
RECORD = st.one_of(
    MESSAGE,
    st.builds(lambda i: {"$rewindTo": i}, st.sampled_from("abcdez")),
    st.builds(lambda m, i: {**m, "$rewindTo": i}, MESSAGE, IDS),  # a rewind with an "id"
    st.builds(lambda ms: {"$set": {"messages": ms}}, st.lists(MESSAGE, max_size=3)),
    st.builds(lambda t: {"$set": {"lastUpdated": t, "summary": t}}, TEXT),
    st.builds(lambda t: {"sessionId": "s-1", "projectHash": "h", "startTime": t}, TEXT),
)


def encode(record: dict[str, Any], style: int) -> bytes:
    if style == 0:  # how Gemini CLI writes them
        return json.dumps(record, separators=(",", ":")).encode()
    if style == 1:
        return json.dumps(record).encode()
    return json.dumps(dict(reversed(record.items()))).encode()  # "id" not first


LINE = st.one_of(
    st.builds(encode, RECORD, st.integers(0, 2)),
    st.builds(lambda r, n: encode(r, 0)[:n], RECORD, st.integers(0, 40)),  # cut short
    st.binary(max_size=12),
    st.sampled_from([b"", b"[1]", b'{"id": 5}', b"\r", b'{"what": "ever"}']),
)


@settings(max_examples=300)
@given(
    st.lists(LINE, max_size=10),
    st.one_of(st.just(b""), LINE),
    st.integers(1, 200),
)
def test_generated_files_load_the_same_on_both_paths(
    lines: list[bytes], tail: bytes, block: int
) -> None:
    import tempfile

    header = encode({"sessionId": "s-1", "projectHash": "h", "startTime": "t"}, 0)
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(_replay, "_BLOCK", block):
        path = Path(tmp) / "synthetic.jsonl"
        path.write_bytes(b"\n".join([header, *lines]) + b"\n" + tail)
        assert_same(path)


def test_a_replayed_message_recorded_again_is_judged_by_its_latest_version(
    tmp_path: Path,
) -> None:
    header = {"sessionId": "s-1", "projectHash": "h", "startTime": "t"}
    records: list[dict[str, Any]] = [
        header,
        {"$set": {"messages": [message("a", "user", "/cmd", odd=False)]}},
        message("a", "user", "a real prompt", odd=False),
    ]
    path = tmp_path / "synthetic.jsonl"
    path.write_bytes(b"".join(encode(r, 0) + b"\n" for r in records))
    assert load_session(path).resumable
    assert_same(path)


def test_loading_leaves_the_collector_as_it_found_it() -> None:
    path = RECORDED[0]
    enabled = gc.isenabled()
    try:
        gc.disable()
        load_session(path)
        assert not gc.isenabled()
        gc.enable()
        gc.freeze()  # e.g. a server before it forks: what it froze stays frozen
        frozen = gc.get_freeze_count()
        load_session(path)
        assert gc.isenabled()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
        if not enabled:
            gc.disable()
