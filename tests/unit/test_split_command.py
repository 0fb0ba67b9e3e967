"""A command given as text (``GEMWIRE_AGENT_<NAME>``, ``gemwire serve --agent``) is split by
the rules of the OS it runs on: backslashes are paths' on Windows, escapes on POSIX."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import example, given, strategies as st

from gemwire._portable import split_command

PROGRAM = r"C:\Users\me\AppData\Roaming\npm\claude-code-acp.cmd"


def test_a_windows_path_keeps_its_backslashes() -> None:
    # POSIX rules read a backslash as an escape: 'C:UsersmeAppData...'.
    assert split_command(rf"{PROGRAM} --flag", "win32") == [PROGRAM, "--flag"]
    assert (
        split_command(rf"{PROGRAM} --flag", "linux")[0]
        == "C:UsersmeAppDataRoamingnpmclaude-code-acp.cmd"
    )


@pytest.mark.parametrize(
    ("line", "arguments"),
    [
        # Microsoft's table (learn.microsoft.com, "Parsing C command-line arguments").
        ('"abc" d e', ["abc", "d", "e"]),
        (r"a\\b d" + '"e f"g h', [r"a\\b", "de fg", "h"]),
        (r"a\\\"b c d", [r"a\"b", "c", "d"]),
        (r"a\\\\" + '"b c" d e', [r"a\\b c", "d", "e"]),
        ('a"b"" c d', ['ab" c d']),
        # Blanks are spaces and tabs; a quote left open runs to the end.
        ('  a\t\tb  "c d', ["a", "b", "c d"]),
        ('"" x', ["", "x"]),
        (r"C:\work\ trailing\\", ["C:\\work\\", "trailing\\\\"]),
    ],
)
def test_arguments_follow_the_c_runtime_s_rules(line: str, arguments: list[str]) -> None:
    assert split_command(f"prog {line}", "win32") == ["prog", *arguments]


@pytest.mark.parametrize(
    ("line", "program"),
    [
        (r'"C:\Program Files\nodejs\node.exe" x', r"C:\Program Files\nodejs\node.exe"),
        (r'"C:\tools\" x', "C:\\tools\\"),  # no escape in the program's path
        (r'C:\a" b"\c.exe x', r"C:\a b\c.exe"),
    ],
)
def test_the_program_is_read_as_a_path(line: str, program: str) -> None:
    assert split_command(line, "win32") == [program, "x"]


@pytest.mark.parametrize("line", ["", "   ", "\t"])
def test_a_blank_line_is_no_words(line: str) -> None:
    assert split_command(line, "win32") == split_command(line, "linux") == []


def test_posix_rules_are_a_shell_s() -> None:
    assert split_command("""agent --name 'a b' "c\\"d" e\\ f""", "darwin") == [
        "agent",
        "--name",
        "a b",
        'c"d',
        "e f",
    ]
    with pytest.raises(ValueError, match="No closing quotation"):
        split_command("agent 'open", "linux")


# What a command line can hold: no NUL, no lone surrogate.
_PROGRAMS = st.text(st.characters(exclude_characters='"\0', codec="utf-8"), min_size=1).filter(
    lambda path: not path.endswith("\\")
)
_ARGUMENTS = st.lists(st.text(st.characters(exclude_characters="\0", codec="utf-8")))


@given(_PROGRAMS, _ARGUMENTS)
@example("prog", ['a "quoted" word', "trailing\\", "", '\\\\"', "tab\there"])
def test_what_list2cmdline_writes_splits_back_into_the_same_words(
    program: str, arguments: list[str]
) -> None:
    # subprocess.list2cmdline writes the line Python starts a program with on Windows.
    line = subprocess.list2cmdline([program, *arguments])
    assert split_command(line, "win32") == [program, *arguments]
