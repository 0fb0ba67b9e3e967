"""Documentation references resolve inside the repository: every relative link of the docs
(a file, and a heading in it), every ``docs/….md`` a docstring or comment names, and the
command table of docs/cli.md (every ``gemwire`` command is in it).

Thirteen docstrings and three docs once cited ``gemini-protocol.md §…``, which is not in the
repository; docs/gemini-cli.md now holds what they relied on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemwire.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "README.md",
    ROOT / "BENCHMARKS.md",
    ROOT / "tests" / "fixtures" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
SOURCES = sorted(
    path for folder in ("src", "tests", "bench") for path in (ROOT / folder).rglob("*.py")
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOCS_REFERENCE = re.compile(r"\bdocs/[\w.-]+\.md(?:#[\w-]+)?")
FENCE = re.compile(r"^```.*?^```$", re.DOTALL | re.MULTILINE)


def anchors(doc: Path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    text = FENCE.sub("", doc.read_text())
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    }


def unresolved(target: str, base: Path) -> str | None:
    """Why ``target`` (``path``, ``path#anchor`` or ``#anchor``) does not resolve from
    ``base``, a folder or the file it is in; ``None`` when it does."""
    path, _, anchor = target.partition("#")
    file = (base.parent if base.is_file() else base) / path if path else base
    if not file.exists():
        return f"{target}: no {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}"
    if anchor and file.suffix == ".md" and anchor not in anchors(file):
        return f"{target}: no heading #{anchor} in {file.name}"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_every_relative_link_of_a_doc_resolves(doc: Path) -> None:
    text = FENCE.sub("", doc.read_text())
    links = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]
    assert [why for target in links if (why := unresolved(target, doc))] == []


def test_every_docs_reference_in_the_code_resolves() -> None:
    broken = [
        f"{path.relative_to(ROOT)}: {why}"
        for path in SOURCES
        for target in DOCS_REFERENCE.findall(path.read_text())
        if (why := unresolved(target, ROOT))
    ]
    assert broken == []


def test_no_reference_to_notes_outside_the_repository() -> None:
    cited = [
        str(path.relative_to(ROOT))
        for path in [*DOCS, *SOURCES]
        if "gemini-protocol.md" in path.read_text() and path != Path(__file__)
    ]
    assert cited == []


def test_the_command_table_of_docs_cli_md_lists_every_command() -> None:
    table = (ROOT / "docs" / "cli.md").read_text().split("## ", 1)[0]
    listed = set(re.findall(r"^\| `gemwire (\w+)", table, re.MULTILINE))
    assert listed == set(main.commands)
