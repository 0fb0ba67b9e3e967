"""HTML and Markdown transcripts of recorded sessions: structure, usage, escaping, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gemwire.cli import main
from gemwire.sessions import ModelPrice, PriceTable, to_html, to_markdown
from gemwire.sessions._transcript import Card, build_transcript
from gemwire.sessions.gemini import load_session

PRICES = PriceTable(
    as_of="2026-11-01",
    source="test",
    models={"gemini-3.8-flash": ModelPrice(input=1.0, output=2.0, cached=0.5)},
)


def test_the_transcript_nests_subagent_work_and_prices_usage(materialize: Any) -> None:
    run = materialize("0.61.0", "session_subagent", "json")
    transcript = build_transcript(load_session(run.session_files()[0]), prices=PRICES)
    kinds = [(type(i).__name__, getattr(i, "kind", None)) for i in transcript.items]
    assert kinds == [
        ("Text", "user"),
        ("Text", "answer"),
        ("Card", "think"),
        ("Text", "answer"),
    ]
    card = transcript.items[2]
    assert isinstance(card, Card)
    assert (card.name, card.status, card.subagent) == (
        "invoke_agent",
        "completed",
        "26e56bb0-ed15-43f8-ba9f-280dbc768ab1",
    )
    assert [
        (type(i).__name__, getattr(i, "name", getattr(i, "kind", None))) for i in card.items
    ] == [
        ("Text", "user"),
        ("Text", "thought"),
        ("Card", "read_file"),
        ("Card", "complete_task"),
    ]
    usage = {u.model: (u.requests, u.total_tokens, u.cost_usd) for u in transcript.usage}
    assert usage == {
        "gemini-3.8-flash": (2, 220, (200 * 1.0 + 20 * 2.0) / 1e6),
        "gemini-3-flash-preview": (2, 220, None),
    }
    assert transcript.unpriced == ["gemini-3-flash-preview"]


def test_file_changes_and_diffs_are_on_the_cards(materialize: Any) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    transcript = build_transcript(load_session(run.session_files()[0]))
    cards = [i for i in transcript.items if isinstance(i, Card)]
    assert [(c.name, [f.change for f in c.files]) for c in cards] == [
        ("write_file", ["created"]),
        ("replace", ["modified"]),
    ]
    assert cards[1].diff is not None
    assert "-helo world\n+hello world" in cards[1].diff
    html = to_html(load_session(run.session_files()[0]))
    assert '<span class="del">-helo world</span><span class="add">+hello world</span>' in html
    assert html.count('<details class="thought">') == 1
    assert "<h2>Files changed</h2>" in html


def test_markdown_keeps_session_text_out_of_html_and_fences(
    materialize: Any, tmp_path: Path
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    [path] = run.session_files()
    hostile = "<script>alert(1)</script> ```` & done"
    text = path.read_text()
    for seen in ("helo world", "Writing it."):
        text = text.replace(seen, json.dumps(hostile)[1:-1])
    path.write_text(text)
    markdown = to_markdown(load_session(path))
    # Outside code fences (where a renderer shows text as it is) no tag gets through.
    prose, fence = [], None
    for line in markdown.splitlines():
        if fence is None and line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            prose.append(line)
    assert fence is None
    assert "<script" not in "\n".join(prose)
    assert "&lt;script>alert(1)&lt;/script> ```` &amp; done" in prose
    # A fence around text holding four backticks has five.
    assert "`````\n" in markdown
    assert markdown.startswith("# create notes.txt\n")
    assert "## Files changed" in markdown


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, ["sessions", "export", *args])


def test_cli_exports_html_and_markdown(materialize: Any, tmp_path: Path) -> None:
    run = materialize("0.61.0", "session_subagent", "json")
    where = ["latest", "--gemini-home", str(run.home), "--project", str(run.workspace)]
    out = tmp_path / "s.html"
    result = cli(*where, "--format", "html", "-o", str(out))
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html
    assert "Subagent session 26e56bb0-ed15-43f8-ba9f-280dbc768ab1" in html
    result = cli(*where, "--format", "markdown")
    assert result.exit_code == 0
    assert result.stdout.startswith("# where is add defined?\n")
    prices = tmp_path / "p.toml"
    prices.write_text('[models."gemini-3.8-flash"]\ninput = 1.0\noutput = 2.0\n')
    result = cli(*where, "--format", "markdown", "--prices", str(prices))
    assert "| gemini-3.8-flash | 2 | 200 | 20 | 0 | 220 | $0.0002 |" in result.stdout
    result = cli(*where, "--format", "html", "--prices", str(tmp_path / "missing.toml"))
    assert result.exit_code == 2
    assert "cannot read the price table" in result.stderr
