"""Gemini CLI arguments for the property tests of ``extra_args``: the flags gemwire owns in the
spellings yargs reads (and some it refuses), and argument groups gemwire passes on.
tests/unit/runners/test_gemini_headless_flags.py holds gemwire's rules to them;
tests/e2e/test_gemini_extra_args_yargs.py holds them to the real parser of each pinned CLI."""

from __future__ import annotations

from hypothesis import strategies as st

OWNED_WORDS = (
    ("prompt",),
    ("prompt", "interactive"),
    ("output", "format"),
    ("query",),
    ("acp",),
    ("experimental", "acp"),
    ("help",),
    ("version",),
    ("list", "extensions"),
    ("list", "sessions"),
    ("delete", "session"),
    ("resume",),
    ("session", "id"),
    ("session", "file"),
    ("is", "command"),
    ("_",),  # yargs's own key of the positional arguments, the prompt
)
OWNED_LETTERS = "piohvlr"

SAFE_GROUPS = (
    ("--debug",),
    ("-d",),
    ("--model", "flash"),
    ("-m", "flash"),
    ("--m=flash",),
    ("--model=-x",),
    ("--yolo",),
    ("-s",),
    ("--no-sandbox",),
    ("--screen-reader",),
    ("--skip-trust",),
    ("--policy", "p.toml"),
    ("--admin-policy=a.toml",),
    ("--approvalMode=auto_edit",),
    ("--include-directories", "../lib"),
    ("-e", "ext"),
    ("--extensions=ext",),
    ("--allowed-tools", "read_file"),
    ("--allowed-mcp-server-names", "git"),
    ("--worktree", "wt"),
    ("-w", "wt"),
    ("--fake-responses", "f.json"),
    ("--raw-output",),
    ("--accept-raw-output-risk",),
)
"""Arguments gemwire passes on: flags it does not own, each with its value if it takes one."""


def _spelled(words: tuple[str, ...], style: str) -> str:
    if style == "camel":
        return words[0] + "".join(word.capitalize() for word in words[1:])
    if style == "upper":
        return "-".join(words).upper()
    joiner = {"kebab": "-", "snake": "_", "double": "--", "mixed": "_-", "glued": ""}[style]
    return joiner.join(words)


@st.composite
def owned_flags(draw: st.DrawFn) -> str:
    """A flag gemwire owns: long or one-letter, kebab, camel, snake, upper case..., negated,
    with three dashes, with a value, or an object in dot notation."""
    if draw(st.booleans()):
        name = draw(st.sampled_from(OWNED_LETTERS))
        if draw(st.booleans()):
            return f"-{name}"
    else:
        words = draw(st.sampled_from(OWNED_WORDS))
        style = draw(
            st.sampled_from(["kebab", "camel", "snake", "double", "mixed", "glued", "upper"])
        )
        name = _spelled(words, style)
    prefix = draw(st.sampled_from(["--", "---", "--no-"]))
    suffix = draw(st.sampled_from(["", "=SMUGGLED", "=", ".x=1", ".x", "=-5"]))
    return prefix + name + suffix


safe_groups = st.sampled_from(SAFE_GROUPS)
safe_args = st.lists(safe_groups, max_size=4).map(lambda groups: [a for g in groups for a in g])
