from __future__ import annotations

import json

import pytest
from kit.corpus import RECORDINGS

from gemwire._normalize.gemini_tools import (
    BUILTIN_TOOL_KINDS,
    ToolFacts,
    describe_tool,
    find_unified_diff,
    split_mcp_name,
)
from gemwire.events import TOOL_KINDS, Location


def declared_tools() -> set[str]:
    names: set[str] = set()
    for meta in RECORDINGS.glob("*/*/meta.json"):
        for recorded in json.loads(meta.read_text())["formats"].values():
            for request in recorded["requests"]:
                names.update(request.get("declared_tools", []))
    return names


def test_every_tool_a_pinned_cli_declared_has_a_known_kind() -> None:
    declared = declared_tools()
    assert len(declared) >= 20  # the corpus covers yolo, default and policy runs
    assert sorted(declared - set(BUILTIN_TOOL_KINDS)) == []
    assert set(BUILTIN_TOOL_KINDS.values()) <= set(TOOL_KINDS)


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        (
            "read_file",
            {"file_path": "src/a.py", "start_line": 3},
            ToolFacts(
                kind="read", title="src/a.py", locations=[Location(path="/ws/src/a.py", line=3)]
            ),
        ),
        (
            "read_file",
            {"absolute_path": "/abs/a.py", "offset": 9},
            ToolFacts(
                kind="read", title="/abs/a.py", locations=[Location(path="/abs/a.py", line=10)]
            ),
        ),
        (
            "write_file",
            {"file_path": "../x/b.txt", "content": "hi"},
            ToolFacts(kind="edit", title="../x/b.txt", locations=[Location(path="/x/b.txt")]),
        ),
        (
            "run_shell_command",
            {"command": "make test\nmake lint", "description": "Run"},
            ToolFacts(kind="execute", title="make test…", locations=[]),
        ),
        (
            "grep_search",
            {"pattern": "TODO", "dir_path": "src"},
            ToolFacts(kind="search", title="TODO", locations=[Location(path="/ws/src")]),
        ),
        (
            "search_file_content",
            {"pattern": "x"},
            ToolFacts(kind="search", title="x", locations=[]),
        ),
        (
            "list_directory",
            {"dir_path": "."},
            ToolFacts(kind="search", title=".", locations=[Location(path="/ws")]),
        ),
        (
            "google_web_search",
            {"query": "gemwire"},
            ToolFacts(kind="search", title="gemwire", locations=[]),
        ),
        (
            "web_fetch",
            {"prompt": "Summarize https://x.dev"},
            ToolFacts(kind="fetch", title="Summarize https://x.dev", locations=[]),
        ),
        (
            "invoke_agent",
            {"agent_name": "codebase_investigator", "prompt": "p"},
            ToolFacts(kind="think", title="codebase_investigator", locations=[]),
        ),
        ("enter_plan_mode", {}, ToolFacts(kind="other", title="enter_plan_mode", locations=[])),
        ("no_such_tool", {"x": 1}, ToolFacts(kind="other", title="no_such_tool", locations=[])),
        (
            "mcp_github_get_issue",
            {"n": 1},
            ToolFacts(
                kind="other",
                title="mcp_github_get_issue",
                locations=[],
                mcp_server="github",
                mcp_tool="get_issue",
            ),
        ),
    ],
)
def test_describe_tool(name: str, params: dict[str, object], expected: ToolFacts) -> None:
    assert describe_tool(name, params, cwd="/ws") == expected


def test_without_a_cwd_paths_stay_as_the_model_gave_them() -> None:
    assert describe_tool("read_file", {"file_path": "a.py"}).locations == [Location(path="a.py")]


def test_long_titles_are_cut() -> None:
    facts = describe_tool("run_shell_command", {"command": "x" * 500})
    assert facts.title == "x" * 200 + "…"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mcp_github_get_issue", ("github", "get_issue")),
        ("mcp_a_b", ("a", "b")),
        ("mcp_only", None),
        ("mcp__x", None),
        ("read_file", None),
    ],
)
def test_split_mcp_name(name: str, expected: tuple[str, str] | None) -> None:
    assert split_mcp_name(name) == expected


def test_find_unified_diff() -> None:
    diff = "Index: /w/a.txt\n===================================================================\n--- a.txt\tOriginal\n+++ a.txt\tWritten\n@@ -0,0 +1 @@\n+hi\n"
    assert find_unified_diff("Wrote it.\n" + diff) == diff
    plain = "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"
    assert find_unified_diff(plain) == plain
    assert find_unified_diff("--- not a diff\nhello") is None
