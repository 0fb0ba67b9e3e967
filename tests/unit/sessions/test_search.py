"""`gemwire sessions search` and `gemwire.sessions.search`: every agent's sessions, the
fields searched, filters, the search index kept right as files change, hostile homes, the CLI."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kit.corpus import FIXTURES
from kit.jsonl_agents import JSONL_AGENTS, JsonlAgent, materialize
from kit.opencode_db import merged

from gemwire.cli import main
from gemwire.sessions import ClaudeHome, OpenCodeHome, SearchMatch, search, source
from gemwire.sessions._search_index import KEPT_TEXT, SearchIndex
from gemwire.sessions._source import SessionSource

Make = Callable[[str, str], Any]  # conftest.Materialized
CLAUDE = next(spec for spec in JSONL_AGENTS if spec.agent == "claude")


def _jsonl_home(spec: JsonlAgent, tmp_path: Path) -> tuple[SessionSource, Path, list[Path]]:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    files = materialize(spec, tmp_path / "home", workspace)
    return spec.home(tmp_path / "home"), workspace, files


def _opencode_home(tmp_path: Path, workspace: Path) -> OpenCodeHome:
    recordings = FIXTURES / "opencode" / "1.18.33"
    sqls = [
        p.read_text().replace("__WORKSPACE__", str(workspace)) for p in recordings.glob("*.sql")
    ]
    merged(sqls, tmp_path / ".local" / "share" / "opencode" / "opencode.db")
    return OpenCodeHome(tmp_path)


class Counting:
    """A source that counts the files it loads (the index spares the unchanged)."""

    def __init__(self, inner: SessionSource) -> None:
        self.inner = inner
        self.loaded: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def load(self, path: str | os.PathLike[str], *, keep_originals: bool = False) -> Any:
        self.loaded.append(os.fspath(path))
        return self.inner.load(path, keep_originals=keep_originals)


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_each_field_of_every_jsonl_agent_is_searched(spec: JsonlAgent, tmp_path: Path) -> None:
    home, workspace, _ = _jsonl_home(spec, tmp_path)
    hits = list(search("TOUCH MADE.TXT", home))
    assert {hit.agent for hit in hits} == {spec.agent}
    assert all(hit.project == str(workspace) for hit in hits)
    fields = {quote.field for hit in hits for quote in hit.quotes}
    assert "tool input" in fields
    assert [q.field for hit in search("go", home) for q in hit.quotes][:1] == ["prompt"]


def test_prompts_answers_and_tool_output_are_quoted(tmp_path: Path) -> None:
    home, _, _ = _jsonl_home(CLAUDE, tmp_path)
    hits = list(search("made.txt", home))
    assert [h.quotes[0] for h in hits] == [
        SearchMatch(field="tool input", text="touch made.txt make a file")
    ] * len(hits)
    answers = {q.field for h in search("On it.", home) for q in h.quotes}
    assert answers == {"answer"}


def test_gemini_and_opencode_sessions_are_searched(materialize: Make, tmp_path: Path) -> None:
    run = materialize("0.61.0", "plain_answer")
    [hit] = search("SAY HELLO", source("gemini", run.home))
    assert (hit.agent, hit.project, hit.quotes) == (
        "gemini",
        str(run.workspace),
        [SearchMatch(field="prompt", text="say hello")],
    )
    opencode = _opencode_home(tmp_path / "oc", tmp_path)
    hits = list(search("hello there", opencode))
    assert hits
    assert {h.agent for h in hits} == {"opencode"}
    assert {q.field for h in hits for q in h.quotes} == {"answer"}
    assert all("#" in h.path for h in hits)


def test_the_text_is_literal_never_a_pattern(tmp_path: Path) -> None:
    home, _, _files = _jsonl_home(CLAUDE, tmp_path)
    assert list(search("m.de", home)) == []
    assert list(search(".*", home)) == []
    assert list(search("(", home)) == []
    assert list(search("", home)) == []


def test_since_and_until_pick_sessions_active_then(tmp_path: Path) -> None:
    home, _, _ = _jsonl_home(CLAUDE, tmp_path)
    every = list(search("go", home))
    days = [h.last_updated[:10] for h in every if h.last_updated]
    assert days == ["2026-11-27"] + ["2026-11-25"] * (len(every) - 1)  # newest first
    utc = UTC
    assert list(search("go", home, since=date(2026, 11, 25), tz=utc)) == every
    assert list(search("go", home, since=date(2026, 11, 26), tz=utc)) == every[:1]
    assert list(search("go", home, until=date(2026, 11, 25), tz=utc)) == every[1:]
    assert list(search("go", home, until=date(2026, 11, 24), tz=utc)) == []
    assert list(search("go", home, since=datetime(2026, 11, 25, tzinfo=utc), tz=utc)) == every


def test_project_picks_one_project(tmp_path: Path) -> None:
    home, workspace, _ = _jsonl_home(CLAUDE, tmp_path)
    assert list(search("go", home, project=workspace)) == list(search("go", home))
    assert list(search("go", home, project=tmp_path / "elsewhere")) == []


def test_a_warm_search_loads_nothing_and_a_changed_file_is_read_again(tmp_path: Path) -> None:
    inner, _, files = _jsonl_home(CLAUDE, tmp_path)
    cold = Counting(inner)
    first = list(search("made", cold))
    assert sorted(cold.loaded) == sorted(map(str, files))
    warm = Counting(inner)
    assert list(search("made", warm)) == first
    assert warm.loaded == []

    # Appended: the new text is found, only that file read again.
    appended = files[0]
    line = appended.read_text().splitlines()[1]
    record = json.loads(line)
    record["message"]["content"] = "zebra crossing"
    record["uuid"] = "00000000-0000-4000-8000-000000000001"
    with appended.open("a") as file:
        file.write(json.dumps(record) + "\n")
    again = Counting(inner)
    [hit] = search("ZEBRA", again)
    assert (hit.path, again.loaded) == (str(appended), [str(appended)])

    # Rewritten in place, to the same size: still read again (its mtime and inode differ).
    text = appended.read_text()
    os.unlink(appended)
    appended.write_text(text.replace("zebra", "tiger"))
    assert list(search("zebra", inner)) == []
    assert [h.path for h in search("tiger", inner)] == [str(appended)]

    # Deleted: never found, and dropped from the index.
    appended.unlink()
    assert list(search("tiger", inner)) == []
    index = SearchIndex("claude", str(inner.home))
    assert str(appended) not in index._old
    assert len(index._old) == len(files) - 1


def test_one_opencode_session_written_to_is_the_one_read_again(tmp_path: Path) -> None:
    """OpenCode's sessions share a database; each is stamped by its own rows' times and
    counts, so a write to one (as OpenCode writes: a part, its message, the session) does not
    make a search read them all again."""
    inner = _opencode_home(tmp_path, tmp_path / "workspace")
    cold = Counting(inner)
    list(search("made", cold))
    listed = inner.all_sessions()
    assert len(cold.loaded) == len(listed) + sum(len(i.subagents) for i in listed)
    warm = Counting(inner)
    list(search("made", warm))
    assert warm.loaded == []
    changed = listed[2]
    with closing(sqlite3.connect(inner.database)) as connection:
        [(part, message)] = connection.execute(
            "SELECT id, message_id FROM part WHERE session_id = ? AND data LIKE ?",
            (changed.id, '%"text":"go"%'),
        ).fetchall()
        connection.execute(
            "UPDATE part SET data = ?, time_updated = time_updated + 1 WHERE id = ?",
            ('{"type":"text","text":"zebra crossing"}', part),
        )
        connection.execute(
            "UPDATE message SET time_updated = time_updated + 1 WHERE id = ?", (message,)
        )
        connection.commit()
    again = Counting(inner)
    [hit] = search("ZEBRA", again)
    assert (hit.id, again.loaded) == (changed.id, [changed.path])
    with closing(sqlite3.connect(inner.database)) as connection:  # a part deleted, no time
        connection.execute(
            "DELETE FROM part WHERE id = (SELECT id FROM part WHERE session_id = ? AND data"
            """ LIKE '%"step-start"%' LIMIT 1)""",
            (changed.id,),
        )
        connection.commit()
    again = Counting(inner)
    assert [h.id for h in search("ZEBRA", again)] == [changed.id]
    assert again.loaded == [changed.path]


def test_the_index_keeps_no_session_over_its_bound(tmp_path: Path) -> None:
    """A session of more text than `KEPT_TEXT` (an answer of hundreds of MB) is read at each
    search, not kept: the index stays the size of the other sessions' text."""
    inner, _, files = _jsonl_home(CLAUDE, tmp_path)
    list(search("made", inner))
    index = SearchIndex("claude", str(inner.home))
    small = index.path.stat().st_size
    big = files[0]  # answer's: its answer made longer than the bound
    text = big.read_text()
    assert text.count('"text":"Hello there."') == 1
    long = "zebra " + "x" * KEPT_TEXT
    big.write_text(text.replace('"text":"Hello there."', f'"text":"{long}"'))
    for _ in range(2):
        again = Counting(inner)
        [hit] = search("ZEBRA", again)
        assert (hit.path, again.loaded) == (str(big), [str(big)])
        assert index.path.stat().st_size < small + 1000
    warm = Counting(inner)
    list(search("made", warm))
    assert warm.loaded == [str(big)]


def test_a_corrupt_index_is_ignored(tmp_path: Path) -> None:
    home, _, _ = _jsonl_home(CLAUDE, tmp_path)
    first = list(search("made", home))
    index = SearchIndex("claude", str(home.home))
    assert index.path.is_file()
    for garbage in (b"", b"\x00not msgpack", index.path.read_bytes()[:40]):
        index.path.write_bytes(garbage)
        assert list(search("made", home)) == first
        assert len(SearchIndex("claude", str(home.home))._old) == 9  # written again, whole


def test_a_search_stopped_early_keeps_the_rest_of_the_index(tmp_path: Path) -> None:
    inner, _, _files = _jsonl_home(CLAUDE, tmp_path)
    list(search("go", inner))
    found = search("go", inner)
    next(found)
    found.close()
    warm = Counting(inner)
    list(search("go", warm))
    assert warm.loaded == []


def test_a_hostile_home_is_a_problem_never_a_hang(tmp_path: Path) -> None:
    home, _workspace, files = _jsonl_home(CLAUDE, tmp_path)
    folder = files[0].parent
    os.mkfifo(folder / "fifo.jsonl")
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "self").symlink_to(folder)
    os.symlink(folder / "nowhere.jsonl", folder / "dangling.jsonl")
    assert len(list(search("go", home))) == len(list(search("go", ClaudeHome(tmp_path / "home"))))
    assert list(search("go", home))


def invoke(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    result = CliRunner(env=env).invoke(main, ["sessions", "search", *args])
    return result.exit_code, result.stdout, result.stderr


def _env(spec: JsonlAgent, tmp_path: Path) -> dict[str, str]:
    return {
        "CLAUDE_CONFIG_DIR": "/nonexistent/.claude",
        "CODEX_HOME": "/nonexistent/.codex",
        "QWEN_HOME": "/nonexistent/.qwen",
        "QWEN_RUNTIME_DIR": "",
        "GEMINI_CLI_HOME": "/nonexistent",
        "XDG_DATA_HOME": "/nonexistent",
        "OPENCODE_DB": "",
        **spec.env(tmp_path / "home"),
    }


def test_the_cli_names_each_session_and_how_to_open_it(tmp_path: Path) -> None:
    _, workspace, _ = _jsonl_home(CLAUDE, tmp_path)
    env = _env(CLAUDE, tmp_path)
    code, out, _ = invoke("touch made", env=env)
    assert code == 0
    blocks = out.split("\nclaude  ")
    assert len(blocks) == 3  # shell, shell_denied, multi_turn
    first = out.splitlines()
    assert first[0].startswith("claude  2026-11-27 ")  # multi_turn, the newest
    assert first[1] == "    tool input: touch made.txt make a file"
    opener = first[2].removeprefix("    open: ")
    words = shlex.split(opener)
    session_id = first[0].rsplit("[", 1)[1].rstrip("]")
    assert words == [
        "gemwire", "sessions", "export", session_id, "--agent", "claude",
        "--project", str(workspace), "--format", "html", "-o", "session.html",
    ]  # fmt: skip
    page = CliRunner(env=env).invoke(main, words[1:-2])
    assert page.exit_code == 0
    assert page.stdout.startswith("<!DOCTYPE html>")
    assert session_id in page.stdout

    code, out, _ = invoke("touch made", "--json", env=env)
    documents = [json.loads(line) for line in out.splitlines()]
    assert next(d["open"] for d in documents) == opener
    assert set(documents[0]) == {
        "agent", "id", "path", "project", "start_time", "last_updated", "title",
        "matches", "quotes", "open",
    }  # fmt: skip


def test_the_cli_finds_nothing_with_status_1_and_rejects_a_bad_date(tmp_path: Path) -> None:
    _jsonl_home(CLAUDE, tmp_path)
    env = _env(CLAUDE, tmp_path)
    assert invoke("no such text anywhere", env=env)[::2] == (1, "No sessions hold that text.\n")
    assert invoke("no such text anywhere", "--json", env=env)[:2] == (1, "")
    code, _, err = invoke("go", "--since", "last tuesday", env=env)
    assert code == 2
    assert "is not a day or a time" in err


def test_what_a_session_holds_never_drives_the_terminal(tmp_path: Path) -> None:
    _, _, files = _jsonl_home(CLAUDE, tmp_path)
    text = files[0].read_text()
    files[0].write_text(text.replace('"go"', '"go \\u001b[31mred\\u001b]0;title\\u0007"', 1))
    code, out, _ = invoke("red", env=_env(CLAUDE, tmp_path))
    assert code == 0
    assert "\x1b" not in out
    assert "\x07" not in out
    code, out, _ = invoke("red", "--json", env=_env(CLAUDE, tmp_path))
    assert json.loads(out)["quotes"][0]["text"] == "go \x1b[31mred\x1b]0;title\x07"
