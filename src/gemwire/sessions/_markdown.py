"""A saved session as Markdown (`to_markdown`): readable as text, safe when rendered.

Prompts and answers are written as they are (they are Markdown already), except that ``<``
and ``&`` are escaped so that no HTML from the session reaches a renderer. Tool inputs,
outputs and diffs go in fenced blocks whose fence is longer than any run of backticks
inside. Reasoning is collapsed in ``<details>`` (with its text escaped).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from gemwire.sessions._html import cost_label
from gemwire.sessions._registry import Loaded
from gemwire.sessions._transcript import Card, Text, Transcript, build_transcript
from gemwire.sessions.pricing import PriceTable

__all__ = ("render_markdown", "to_markdown")

_BACKTICKS = re.compile(r"`{3,}")


def _text(text: str) -> str:
    """Markdown text with every HTML tag and entity shown as text."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def _line(text: str) -> str:
    """One line of a heading or list item: no line breaks, no HTML."""
    return _text(" ".join(text.split()))


def _fence(body: str, info: str = "") -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{info}\n{body.rstrip(chr(10))}\n{fence}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.split("\n"))


def _card(card: Card, agent: str) -> list[str]:
    status = card.status or "running"
    out = [f"**{_line(card.kind)} · `{_line(card.name)}`** {_line(card.title)} — {_line(status)}"]
    if card.input:
        out.append(_fence(json.dumps(card.input, indent=2, ensure_ascii=False), "json"))
    if card.error:
        out.append(f"Error: {_line(card.error)}")
    if card.diff:
        out.append(_fence(card.diff, "diff"))
    elif card.output:
        out.append(_fence(card.output))
    out.extend(f"- {_line(f.change)} `{_line(f.path)}`" for f in card.files)
    if card.items:
        who = f"Subagent session {card.subagent}" if card.subagent else "Subagent"
        nested = [f"**{_line(who)}**", *(_item(item, agent) for item in card.items)]
        out.append(_quote("\n\n".join(nested)))
    return out


def _item(item: Text | Card, agent: str) -> str:
    if isinstance(item, Card):
        return "\n\n".join(_card(item, agent))
    match item.kind:
        case "user":
            return f"### User\n\n{_text(item.text)}"
        case "answer":
            return f"### {_line(agent)}\n\n{_text(item.text)}"
        case "thought":
            first = item.text.strip().split("\n", 1)[0].strip("* ") or "Thinking"
            return (
                f"<details><summary>Thinking: {_line(first[:120])}</summary>\n\n"
                f"{_text(item.text)}\n\n</details>"
            )
    return f"*{_line(item.kind)}:* {_text(item.text)}"


def render_markdown(transcript: Transcript) -> str:
    """The Markdown document for a `Transcript`."""
    title = transcript.summary or next(
        (i.text for i in transcript.items if isinstance(i, Text) and i.kind == "user"),
        f"{transcript.agent} session",
    )
    requests = sum(u.requests for u in transcript.usage)
    tokens = sum(u.total_tokens for u in transcript.usage)
    out = [
        f"# {_line(title)[:100]}",
        (
            f"Session `{_line(transcript.session_id or '?')}` · "
            f"{_line(transcript.start_time or '')} · {requests:,} model requests · "
            f"{tokens:,} tokens · estimated cost {cost_label(transcript)}"
        ),
        *(_item(item, transcript.agent) for item in transcript.items),
    ]
    if transcript.files:
        out.append("## Files changed")
        out.append("\n".join(f"- {_line(f.change)} `{_line(f.path)}`" for f in transcript.files))
    if transcript.usage:
        rows = [
            "| Model | Requests | Input | Output | Cached | Total | Cost (estimate) |",
            "|---|--:|--:|--:|--:|--:|--:|",
        ]
        for u in transcript.usage:
            cost = "no price" if u.cost_usd is None else f"${u.cost_usd:,.4f}"
            rows.append(
                f"| {_line(u.model).replace('|', '&#124;')} | {u.requests:,} | "
                f"{u.input_tokens:,} | {u.output_tokens:,} | {u.cached_tokens:,} | "
                f"{u.total_tokens:,} | {cost} |"
            )
        out.append("## Usage\n\n" + "\n".join(rows))
        out.append(
            f"Costs are estimates: prices as of {_line(transcript.prices_as_of)} from "
            f"{_line(transcript.prices_source)}."
        )
    return "\n\n".join(out) + "\n"


def to_markdown(
    conversation: Loaded,
    *,
    cwd: str | None = None,
    prices: PriceTable | None = None,
    secrets: Iterable[str] | None = None,
    redact: bool = False,
) -> str:
    """A loaded session as Markdown, subagents quoted under the call that ran them.

    ``secrets`` are masked wherever they appear (by default the secret values of this
    process's environment: docs/security.md); ``redact`` also takes out API keys, tokens,
    e-mail addresses and the home folder (`gemwire.sessions._redact`, docs/sessions.md).
    """
    transcript = build_transcript(
        conversation, cwd=cwd, prices=prices, secrets=secrets, redact=redact
    )
    return render_markdown(transcript)
