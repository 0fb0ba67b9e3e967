"""What every agent whose sessions are JSON lines must do (`jsonl_agents.JSONL_AGENTS`):
its recordings' golden events, the wire types held strictly to them, hostile files, the
home (listing, lookups, usage), `load_session` telling it from the others, and the CLI."""

from __future__ import annotations

import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.hostile import cut_text, mutated, within
from kit.jsonl_agents import JSONL_AGENTS, JsonlAgent, cases_of, materialize

from gemwire.cli import main
from gemwire.cli.safe_text import terminal_safe_event
from gemwire.events import Notice, SessionStarted, UserMessage, encode_event
from gemwire.protocol._strict import unknown_fields
from gemwire.sessions import load_session, search, usage
from gemwire.sessions._jsonl import load_jsonl, read_jsonl_info

CASES = [(spec, case) for spec in JSONL_AGENTS for case in cases_of(spec.recordings)]
EVERY_CASE = ["answer", "cancel", "edit", "multi_turn", "shell", "shell_denied", "tool_error"]
EVERY_CASE += ["write", "write_denied"]


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_every_case_is_recorded(spec: JsonlAgent) -> None:
    assert cases_of(spec.recordings) == EVERY_CASE


@pytest.mark.parametrize(("spec", "case"), CASES, ids=str)
def test_golden_events(spec: JsonlAgent, case: str) -> None:
    conversation = load_session(spec.recordings / f"{case}.jsonl")
    assert type(conversation) is spec.kind
    assert conversation.problems == []
    events = [msgspec.to_builtins(e) for e in conversation.events()]
    golden = (spec.recordings / f"{case}.events.jsonl").read_text().splitlines()
    assert events == [json.loads(line) for line in golden]


@pytest.mark.parametrize(("spec", "case"), CASES, ids=str)
def test_the_wire_types_declare_every_recorded_field(spec: JsonlAgent, case: str) -> None:
    for line in (spec.recordings / f"{case}.jsonl").read_bytes().splitlines():
        assert unknown_fields(json.loads(line), spec.record) == []


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_a_file_that_is_not_a_session_is_a_problem_not_a_crash(
    spec: JsonlAgent, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert [p.message for p in load_jsonl(empty, spec.kind).problems] == ["empty file"]
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    [problem] = load_jsonl(fifo, spec.kind).problems
    assert problem.message == "not a regular file (a FIFO): not read"


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
@given(chunks=st.lists(st.binary(max_size=80), max_size=6))
def test_any_bytes_load_and_map_without_raising(spec: JsonlAgent, chunks: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(b"\n".join([spec.first_line, *chunks]))
        events = list(load_jsonl(path, spec.kind).events())
    assert isinstance(events[0], SessionStarted)
    assert all(not isinstance(e, Notice) or e.message for e in events)


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hostile_recordings_load_list_and_encode(spec: JsonlAgent, data: st.DataObject) -> None:
    """The fuzzing harness used for Gemini's files (tests/kit/hostile.py) on the recordings."""
    case = data.draw(st.sampled_from(cases_of(spec.recordings)))
    hostile = data.draw(mutated((spec.recordings / f"{case}.jsonl").read_bytes()))
    with tempfile.TemporaryDirectory() as folder, within(30):
        path = Path(folder) / "s.jsonl"
        path.write_bytes(hostile)
        events = list(load_jsonl(path, spec.kind).events())
        assert isinstance(events[0], SessionStarted)
        for event in events:
            encode_event(terminal_safe_event(event))
        assert read_jsonl_info(path, spec.kind).agent == spec.agent


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_the_home_lists_finds_and_counts(spec: JsonlAgent, tmp_path: Path) -> None:
    workspace = tmp_path / "my_work"
    files = materialize(spec, tmp_path / "home", workspace)
    home = spec.home(tmp_path / "home")
    listed = home.sessions(workspace)
    assert sorted(i.path for i in listed) == sorted(map(str, files))
    assert [i.index for i in listed] == list(range(1, len(files) + 1))
    assert {(i.agent, i.project, i.first_prompt) for i in listed} == {
        (spec.agent, str(workspace), "go")
    }
    assert home.find("latest", workspace) == listed[-1]
    assert home.find(listed[0].id or "", workspace) == listed[0]
    assert home.find(files[0]).path == str(files[0])
    assert home.all_sessions() == listed
    assert home.sessions(tmp_path / "elsewhere") == []
    report = usage(home, by="model")
    responses = sum(spec.responses.values())
    assert [(r.key, r.requests) for r in report.rows] == [(spec.model, responses)]
    assert report.total.total_tokens == spec.tokens * responses - spec.unspent
    assert report.agents == [spec.agent]
    assert usage(home, project=str(workspace)).total.requests == responses
    assert usage(home, project=str(tmp_path / "elsewhere")).total.requests == 0


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_the_cli_lists_shows_and_exports(spec: JsonlAgent, tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    materialize(spec, tmp_path / "home", workspace)
    env = {
        "HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude"),
        "GEMINI_CLI_HOME": str(tmp_path),
        **spec.env(tmp_path / "home"),
    }
    runner = CliRunner(env=env)
    where = ["--agent", spec.agent, "--project", str(workspace)]
    listed = runner.invoke(main, ["sessions", "list", *where, "--json"])
    assert listed.exit_code == 0
    assert len(listed.stdout.splitlines()) == len(EVERY_CASE)
    shown = runner.invoke(main, ["sessions", "show", "1", *where, "--json"])
    assert shown.exit_code == 0
    assert json.loads(shown.stdout.splitlines()[0])["agent"] == spec.agent
    name = {"claude": "Claude Code", "qwen": "Qwen Code", "codex": "Codex"}[spec.agent]
    # The latest session: multi_turn's, whose first answer is "First answer."
    markdown = runner.invoke(main, ["sessions", "export", "latest", *where, "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.stderr
    assert f"### {name}\n\nFirst answer." in markdown.stdout
    html = runner.invoke(main, ["sessions", "export", "latest", *where, "--format", "html"])
    assert html.exit_code == 0, html.stderr
    answer = '<div class="md"><p>First answer.</p>\n</div>'
    assert f'<div class="role">{name}</div>{answer}' in html.stdout
    claude = runner.invoke(main, ["sessions", "export", "1", *where, "--format", "claude"])
    assert claude.exit_code == 2
    assert f"--format claude of a {name} session is not supported yet" in claude.stderr
    every = runner.invoke(main, ["usage", "--agent", "all", "--json"])
    assert every.exit_code == 0, every.stderr
    assert spec.agent in json.loads(every.stdout)["agents"]


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
@pytest.mark.parametrize(
    ("cut", "read", "why"),
    [
        # Node cuts a text in the middle of an emoji and writes the half it kept so.
        (rb'"go \ud83d"', "go \ufffd", "replaced 1 lone UTF-16 surrogate(s) in the agent's"),
        (b'"go \xff\xfe"', "go \ufffd\ufffd", "replaced 2 invalid UTF-8 byte(s) with U+FFFD"),
    ],
    ids=["lone surrogate", "invalid UTF-8"],
)
def test_a_prompt_that_is_not_unicode_is_read_as_node_reads_it(
    spec: JsonlAgent, cut: bytes, read: str, why: str, tmp_path: Path
) -> None:
    """The line is kept (else the session, without its prompt, would not be listed), with
    U+FFFD for what is not text and a problem that says so."""
    workspace = tmp_path / "w"
    [path, *_] = materialize(spec, tmp_path / "home", workspace)  # answer's
    text = path.read_bytes()
    assert b'"go"' in text
    path.write_bytes(text.replace(b'"go"', cut))
    lines = [n for n, line in enumerate(path.read_bytes().splitlines(), 1) if cut in line]
    [info] = [i for i in spec.home(tmp_path / "home").sessions(workspace) if i.path == str(path)]
    assert (info.first_prompt, info.problems) == (read, len(lines))
    conversation = load_session(path)
    assert [(p.line, p.message[: len(why)]) for p in conversation.problems] == [
        (n, why) for n in lines
    ]
    events = list(conversation.events())
    assert [e.text for e in events if isinstance(e, UserMessage)] == [read]
    [hit] = search(read, spec.home(tmp_path / "home"))
    assert hit.path == str(path)


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(data=st.data())
def test_text_that_is_not_unicode_loses_no_record(spec: JsonlAgent, data: st.DataObject) -> None:
    """The fuzzing harness's cut texts (tests/kit/hostile.py): every record is kept, each line
    with a cut says it was repaired, and nothing else is wrong."""
    case = data.draw(st.sampled_from(cases_of(spec.recordings)))
    recorded = (spec.recordings / f"{case}.jsonl").read_bytes()
    hostile = data.draw(cut_text(recorded))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(hostile)
        loaded = load_jsonl(path, spec.kind)
        info = read_jsonl_info(path, spec.kind)
    assert len(loaded.records) == len(recorded.splitlines())
    pairs = zip(hostile.splitlines(), recorded.splitlines(), strict=True)
    cut = [n for n, (line, was) in enumerate(pairs, 1) if line != was]
    assert sorted({p.line for p in loaded.problems}) == cut
    assert all(p.message.startswith("replaced ") for p in loaded.problems)
    assert info.problems == len(loaded.problems)


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_listing_and_usage_hold_a_long_line_once(spec: JsonlAgent, tmp_path: Path) -> None:
    """An answer of 16 MiB: listing and usage decode only what they read (the answer is
    skipped, not built), keep no record, and never copy the line: the peak of what they
    allocate (tracemalloc, not the clock) is about the line, once. It was 3 to 5 times."""
    workspace = tmp_path / "w"
    [path, *_] = materialize(spec, tmp_path / "home", workspace)  # answer's
    text = path.read_text()
    long = "x" * (16 << 20)
    path.write_text(text.replace("Hello there.", long, 1))
    size = path.stat().st_size
    home = spec.home(tmp_path / "home")
    for read in (
        lambda: read_jsonl_info(path, spec.kind),
        lambda: usage(home, project=str(workspace)),
    ):
        tracemalloc.start()
        try:
            read()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1.5 * size, f"{peak / size:.2f} times the file"
    info = read_jsonl_info(path, spec.kind)
    assert (info.first_prompt, info.problems) == ("go", 0)
    requests = sum(spec.responses.values())
    assert usage(home, project=str(workspace)).total.requests == requests
