"""The saved sessions of today's adapters (codex-acp 2.6.0: Codex 0.166 rollouts;
claude-agent-acp 0.101.0: Claude Code 2.1.318 transcripts) beyond what
test_jsonl_sources.py checks of every recording: every record type they write is read or
skipped on purpose, usage and search through the CLI, and the record decoders hold against
any JSON object."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st
from kit.corpus import FIXTURES
from kit.jsonl_agents import JSONL_AGENTS, materialize

from gemwire._normalize.claude_session import SKIPPED, ClaudeSessionNormalizer
from gemwire._normalize.codex_session import CodexSessionNormalizer
from gemwire.cli import main
from gemwire.events import SessionUpdated, UsageReported
from gemwire.protocol._strict import unknown_fields
from gemwire.protocol.codex_session import item_type, payload_of
from gemwire.sessions import load_session
from gemwire.wire import claude_session, codex_session

CODEX = FIXTURES / "codex" / "2.6.0"
CLAUDE = FIXTURES / "claude" / "0.101.0"
CODEX_SPEC = next(s for s in JSONL_AGENTS if s.recordings == CODEX)

# What each Codex 0.166 record decodes to, where its fields are held strictly.
PAYLOADS: dict[str, type[Any]] = {
    "session_meta": codex_session.SessionMeta,
    "turn_context": codex_session.TurnContext,
    "response_item": codex_session.ResponseItem,
    "event_msg": codex_session.EventMsg,
    "token_usage_record": codex_session.TokenUsageRecord,
}


def _lines(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(folder.glob("*.jsonl"))
        if not path.name.endswith(".events.jsonl")
        for line in path.read_text().splitlines()
    ]


def test_codex_0_166_writes_these_records_and_every_decoded_field_is_declared() -> None:
    kinds = set()
    for record in _lines(CODEX):
        payload = record["payload"]
        kind = payload.get("type") if record["type"] in ("event_msg", "response_item") else None
        item = payload.get("item", {}).get("type") if kind == "item_completed" else None
        kinds.add("/".join(k for k in (record["type"], kind, item) if k))
        if record["type"] in PAYLOADS:
            assert unknown_fields(payload, PAYLOADS[record["type"]]) == [], record
    assert kinds == {
        "session_meta",
        "world_state",  # skipped: the context Codex gives the model
        "turn_context",
        "token_usage_record",
        "event_msg/task_started",
        "event_msg/task_complete",
        "event_msg/thread_settings_applied",  # skipped: each turn_context says the model
        "event_msg/token_count",
        "event_msg/turn_aborted",
        "event_msg/item_completed/UserMessage",
        "event_msg/item_completed/AgentMessage",
        "event_msg/item_completed/Reasoning",
        "event_msg/item_completed/FileChange",
        "event_msg/item_completed/CommandExecution",  # skipped: its function_call says it
        "response_item/message",
        "response_item/reasoning",
        "response_item/function_call",
        "response_item/function_call_output",
        "response_item/custom_tool_call",
        "response_item/custom_tool_call_output",
    }


def test_claude_code_2_1_318_writes_these_records_each_read_or_skipped() -> None:
    types = {record["type"] for record in _lines(CLAUDE)}
    read = {"user", "assistant", "cost-state"}
    assert types - read == {
        "queue-operation",
        "attachment",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "last-prompt",
        "tools-used",
    }
    assert types - read <= SKIPPED


def test_a_codex_rollout_s_usage_comes_once_a_response_from_token_usage_record() -> None:
    """token_usage_record and the token_count after it say the same response: counted once."""
    events = list(load_session(CODEX / "write.jsonl").events())
    usage = [e.usage for e in events if isinstance(e, UsageReported)]
    assert [(u.input_tokens, u.output_tokens, list(u.by_model)) for u in usage] == [
        (100, 10, ["gpt-5.5"]),
        (100, 10, ["gpt-5.5"]),
    ]


def test_a_claude_transcript_s_cost_is_the_agent_s_own_in_usd() -> None:
    events = list(load_session(CLAUDE / "multi_turn.jsonl").events())
    [cost] = [e for e in events if isinstance(e, SessionUpdated)]
    assert (cost.update, cost.data) == (
        "usage_update",
        {"cost": {"amount": 0.0024000000000000002, "currency": "USD"}},
    )
    assert events[-1] is cost


def test_a_claude_permission_mode_record_is_a_mode_update() -> None:
    record = msgspec.json.decode(
        b'{"type":"permission-mode","permissionMode":"default","sessionId":"s"}',
        type=claude_session.Record,
    )
    normalizer = ClaudeSessionNormalizer(session_id="s", cwd=None)
    [event] = normalizer.feed(record)
    assert isinstance(event, SessionUpdated)
    assert (event.update, event.data) == ("current_mode_update", {"currentModeId": "default"})
    mode = msgspec.structs.replace(record, type="mode", mode="coordinator")
    assert normalizer.feed(mode) == []


def _cli(tmp_path: Path) -> tuple[CliRunner, Path]:
    workspace = tmp_path / "w"
    materialize(CODEX_SPEC, tmp_path / "home", workspace)
    env = {"HOME": str(tmp_path), **CODEX_SPEC.env(tmp_path / "home")}
    return CliRunner(env=env), workspace


def test_usage_of_codex_0_166_by_model(tmp_path: Path) -> None:
    runner, _ = _cli(tmp_path)
    done = runner.invoke(main, ["usage", "--agent", "codex", "--by", "model", "--json"])
    assert done.exit_code == 0, done.stderr
    [row] = json.loads(done.stdout)["rows"]
    assert (row["key"], row["requests"], row["input_tokens"], row["output_tokens"]) == (
        "gpt-5.5",
        17,
        1700,
        170,
    )


def test_search_finds_a_codex_0_166_prompt_and_answer(tmp_path: Path) -> None:
    runner, workspace = _cli(tmp_path)
    where = ["--agent", "codex", "--project", str(workspace), "--json"]
    for text, field in (("and again", "prompt"), ("First answer.", "answer")):
        done = runner.invoke(main, ["sessions", "search", text, *where])
        assert done.exit_code == 0, done.stderr
        [found] = [json.loads(line) for line in done.stdout.splitlines()]
        assert (found["title"], found["quotes"]) == ("go", [{"field": field, "text": text}])


def test_a_codex_0_166_listing_names_each_session_by_its_prompt(tmp_path: Path) -> None:
    runner, workspace = _cli(tmp_path)
    where = ["--agent", "codex", "--project", str(workspace), "--json"]
    done = runner.invoke(main, ["sessions", "list", *where])
    assert done.exit_code == 0, done.stderr
    listed = [json.loads(line) for line in done.stdout.splitlines()]
    assert {s["first_prompt"] for s in listed} == {"go"}
    assert sorted(s["messages"] for s in listed) == [1, 2, 2, 3, 3, 3, 3, 3, 5]


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(st.text(max_size=12), _JSON, max_size=6)
_CODEX_TYPES = [*PAYLOADS, "world_state", "compacted"]
_EVENT_TYPES = ["item_completed", "thread_settings_applied", "token_count", "turn_aborted"]
_ITEM_TYPES = ["UserMessage", "AgentMessage", "Reasoning", "FileChange", "CommandExecution"]


@settings(max_examples=150, deadline=None)
@given(
    record_type=st.sampled_from(_CODEX_TYPES),
    event_type=st.sampled_from(_EVENT_TYPES),
    item=st.sampled_from(_ITEM_TYPES),
    payload=_OBJECTS,
    fields=_OBJECTS,
)
def test_any_codex_payload_decodes_and_maps_without_raising(
    record_type: str, event_type: str, item: str, payload: dict[str, Any], fields: dict[str, Any]
) -> None:
    payload = {"type": event_type, **payload, "item": {"type": item, **fields}}
    line = json.dumps({"type": record_type, "payload": payload}).encode()
    record = msgspec.json.decode(line, type=codex_session.Record)
    item_type(record)
    payload_of(record)
    normalizer = CodexSessionNormalizer(session_id="s", cwd="/w")
    normalizer.feed(record)
    normalizer.finish()


_CLAUDE_TYPES = [*sorted(SKIPPED), "cost-state", "permission-mode", "user", "assistant"]


@settings(max_examples=150, deadline=None)
@given(record_type=st.sampled_from(_CLAUDE_TYPES), fields=_OBJECTS)
def test_any_claude_record_loads_and_maps_without_raising(
    record_type: str, fields: dict[str, Any]
) -> None:
    """A line Claude Code's types do not fit is a problem of the file, never an exception;
    a record of a type gemwire reads or skips is never ``unknown``."""
    line = json.dumps({**fields, "type": record_type, "sessionId": "s"}).encode()
    first = b'{"type":"user","sessionId":"s","cwd":"/w","message":{"role":"user","content":"hi"}}'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(first + b"\n" + line)
        events = list(load_session(path).events())
    assert events[0].type == "session_started"
    if record_type not in ("user", "assistant"):  # without a message: kept as unknown
        assert "unknown" not in [e.type for e in events]


@settings(max_examples=150, deadline=None)
@given(
    before=st.dictionaries(st.sampled_from(["thread_id", "turn_id", "x"]), st.text(), max_size=3),
    item=st.sampled_from(_ITEM_TYPES) | st.text(max_size=50),
    spacing=st.booleans(),
)
def test_an_item_s_type_read_in_place_is_the_decoded_one(
    before: dict[str, str], item: str, spacing: bool
) -> None:
    """`item_type` reads Codex's own layout in place, and any other by decoding: the same."""
    payload = {"type": "item_completed", **before, "item": {"type": item, "id": "i"}}
    separators = (", ", ": ") if spacing else (",", ":")
    line = json.dumps({"type": "event_msg", "payload": payload}, separators=separators)
    record = msgspec.json.decode(line, type=codex_session.Record)
    assert item_type(record) == item
