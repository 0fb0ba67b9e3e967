"""A saved session as one self-contained HTML page (`to_html`).

Safe to open whatever the session holds: every text from the file is escaped, the page has
no script at all, and its Content-Security-Policy forbids scripts, network requests and
external assets (the styles are inline). Reasoning is collapsed, tool calls are cards with
their input, output and a coloured diff, a subagent's work sits inside the call that ran it,
and the page ends with the files changed and the usage with its estimated cost.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from html import escape

from gemwire.sessions._registry import Loaded
from gemwire.sessions._transcript import Card, Text, Transcript, build_transcript
from gemwire.sessions.pricing import PriceTable

__all__ = ("cost_label", "render_html", "to_html")

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
_SAFE_CLASS = re.compile(r"[a-z_]{1,20}")
_OPEN_LINES = 12
"""Outputs longer than this start collapsed."""


_MARKDOWN_MAX = 65_536
"""Longer texts are shown as text: Markdown made to be slow (emphasis that never closes) costs
markdown-it about 2 s per 80,000 characters, and an answer this long is rarely prose."""


def _prose(text: str) -> str:
    """An answer or a thought, drawn as Markdown unless it is too long for that."""
    if len(text) > _MARKDOWN_MAX:
        return f'<div class="text">{_e(text)}</div>'
    return f'<div class="md">{_markdown()(text)}</div>'


@functools.cache
def _markdown() -> Callable[[str], str]:
    """Answers and reasoning drawn as Markdown, as the web page draws them: HTML in the text
    is escaped, and a link or an image stays its text and address, so nothing in the page
    points anywhere (it makes no request; a ``javascript:`` address is inert text). Built on
    first use: importing markdown-it takes 0.1 to 0.3 s, which no other command should pay."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False}).disable(["image", "link", "autolink"])
    return parser.render


_STYLE = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--accent:#0969da;
--add:#dafbe1;--addfg:#116329;--del:#ffebe9;--delfg:#82071e;--warn:#9a6700;--err:#cf222e}
*{box-sizing:border-box}
body{margin:0 auto;max-width:62rem;padding:2rem 1.25rem;font:15px/1.5 system-ui,-apple-system,
"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header h1{font-size:1.4rem;margin:0 0 .25rem}
.meta{color:var(--muted);font-size:.85rem;word-break:break-all}
.stats{display:flex;gap:1.5rem;flex-wrap:wrap;margin:.75rem 0 1.5rem;font-size:.9rem}
.stats b{display:block;font-size:1.1rem}
.msg{margin:1rem 0}
.role{font-size:.75rem;font-weight:600;text-transform:uppercase;letter-spacing:.04em;
color:var(--muted);margin-bottom:.2rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.md{overflow-wrap:anywhere}
.md>:first-child{margin-top:0}
.md>:last-child{margin-bottom:0}
.md :not(pre)>code{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--soft);
border-radius:4px;padding:.05rem .3rem}
.md blockquote{margin:.5rem 0;padding-left:.75rem;border-left:3px solid var(--line);color:var(--muted)}
.user .text{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}
details.thought{margin:.5rem 0;color:var(--muted);border-left:3px solid var(--line);padding-left:.75rem}
details.thought summary{cursor:pointer;font-style:italic}
.card{border:1px solid var(--line);border-radius:8px;margin:.75rem 0;background:var(--bg)}
.card>.head{display:flex;gap:.5rem;align-items:baseline;padding:.5rem .75rem;
background:var(--soft);border-bottom:1px solid var(--line);border-radius:8px 8px 0 0;flex-wrap:wrap}
.card>.body{padding:.25rem .75rem .5rem}
.badge{font-size:.7rem;font-weight:600;border-radius:1rem;padding:.05rem .5rem;
border:1px solid var(--line);background:var(--bg)}
.name{font-family:ui-monospace,monospace;font-weight:600}
.title{color:var(--muted);overflow-wrap:anywhere;flex:1}
.status-completed .status{color:var(--addfg)}
.status-failed .status{color:var(--err)}
.status-cancelled .status{color:var(--warn)}
pre{margin:.25rem 0;padding:.5rem .75rem;background:var(--soft);border-radius:6px;overflow:auto;
max-height:32rem;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;
overflow-wrap:anywhere}
pre.diff span{display:block}
.add{background:var(--add);color:var(--addfg)}
.del{background:var(--del);color:var(--delfg)}
.hunk{color:var(--accent)}
.card summary{cursor:pointer;font-size:.85rem;color:var(--muted);margin:.35rem 0}
.error{color:var(--err);white-space:pre-wrap}
.subagent{border-left:3px solid var(--accent);margin:.5rem 0;padding-left:.75rem}
.subagent>.role{color:var(--accent);text-transform:none}
.notice{font-size:.85rem;margin:.5rem 0;padding:.35rem .6rem;border-radius:6px;background:var(--soft);
white-space:pre-wrap;overflow-wrap:anywhere}
.notice.warning{color:var(--warn)}
.notice.error{color:var(--err)}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}
th,td{border-bottom:1px solid var(--line);padding:.3rem .6rem;text-align:right}
th:first-child,td:first-child{text-align:left}
h2{font-size:1.1rem;margin-top:2rem}
.files li{font-family:ui-monospace,monospace;font-size:.85rem}
.note{color:var(--muted);font-size:.8rem}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _cls(value: str) -> str:
    """A class name made from session data: only known-safe spellings get through."""
    return value if _SAFE_CLASS.fullmatch(value) else "other"


def _money(value: float | None) -> str:
    if value is None:
        return "no price"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def cost_label(transcript: Transcript) -> str:
    """``$0.12``; ``$0.12 + unpriced`` when some models have no price; ``no price`` if none has."""
    priced = [u for u in transcript.usage if u.cost_usd is not None]
    if transcript.usage and not priced:
        return "no price"
    return _money(transcript.cost_usd) + (" + unpriced" if transcript.unpriced else "")


def _diff(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        elif line.startswith("@@"):
            kind = "hunk"
        else:
            kind = ""
        lines.append(f'<span class="{kind}">{_e(line) or " "}</span>')
    return '<pre class="diff">' + "".join(lines) + "</pre>"


def _block(label: str, body: str, *, opened: bool) -> str:
    state = " open" if opened else ""
    return f"<details{state}><summary>{_e(label)}</summary>{body}</details>"


def _card(card: Card, agent: str) -> str:
    status = card.status or "running"
    parts = [
        f'<div class="card status-{_cls(status)} kind-{_cls(card.kind)}">',
        '<div class="head">',
        f'<span class="badge">{_e(card.kind)}</span>',
        f'<span class="name">{_e(card.name)}</span>',
        f'<span class="title">{_e(card.title)}</span>',
        f'<span class="status">{_e(status)}</span>',
        '</div><div class="body">',
    ]
    if card.input:
        text = json.dumps(card.input, indent=2, ensure_ascii=False)
        parts.append(_block("Input", f"<pre>{_e(text)}</pre>", opened=False))
    if card.error:
        parts.append(f'<div class="error">{_e(card.error)}</div>')
    if card.diff:
        opened = card.diff.count("\n") <= _OPEN_LINES
        parts.append(_block("Diff", _diff(card.diff), opened=opened))
    elif card.output:
        count = card.output.count("\n") + 1
        label = f"Output ({count} lines)" if count > 1 else "Output"
        parts.append(_block(label, f"<pre>{_e(card.output)}</pre>", opened=count <= _OPEN_LINES))
    if card.files:
        files = "".join(f"<li>{_e(f.change)} {_e(f.path)}</li>" for f in card.files)
        parts.append(f'<ul class="files">{files}</ul>')
    if card.items:
        who = f"Subagent session {card.subagent}" if card.subagent else "Subagent"
        parts.append(f'<div class="subagent"><div class="role">{_e(who)}</div>')
        parts.extend(_item(item, agent) for item in card.items)
        parts.append("</div>")
    parts.append("</div></div>")
    return "".join(parts)


def _item(item: Text | Card, agent: str) -> str:
    if isinstance(item, Card):
        return _card(item, agent)
    text = item.text
    match item.kind:
        case "user":
            return f'<section class="msg user"><div class="role">User</div><div class="text">{_e(text)}</div></section>'
        case "answer":
            return f'<section class="msg answer"><div class="role">{_e(agent)}</div>{_prose(text)}</section>'
        case "thought":
            first = text.strip().split("\n", 1)[0].strip("* ") or "Thinking"
            return (
                f'<details class="thought"><summary>Thinking: {_e(first[:120])}</summary>'
                f"{_prose(text)}</details>"
            )
    return f'<div class="notice {_cls(item.kind)}">{_e(item.kind)}: {_e(text)}</div>'


def _first_prompt(transcript: Transcript) -> str | None:
    return next(
        (i.text for i in transcript.items if isinstance(i, Text) and i.kind == "user"), None
    )


def render_html(transcript: Transcript) -> str:
    """The page for a `Transcript`."""
    title = " ".join(
        (transcript.summary or _first_prompt(transcript) or f"{transcript.agent} session").split()
    )
    title = title if len(title) <= 100 else title[:97] + "..."
    requests = sum(u.requests for u in transcript.usage)
    tokens = sum(u.total_tokens for u in transcript.usage)
    cost = cost_label(transcript)
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
        (
            f'<div class="meta">Session {_e(transcript.session_id or "?")} · '
            f"{_e(transcript.start_time or '')} · {_e(transcript.path)}</div>"
        ),
        '<div class="stats">',
        f"<div><b>{requests:,}</b>model requests</div>",
        f"<div><b>{tokens:,}</b>tokens</div>",
        f"<div><b>{_e(cost)}</b>estimated cost</div>",
        f"<div><b>{len(transcript.files):,}</b>files changed</div>",
        "</div></header><main>",
    ]
    out.extend(_item(item, transcript.agent) for item in transcript.items)
    out.append("</main>")
    if transcript.files:
        out.append('<h2>Files changed</h2><ul class="files">')
        out.extend(f"<li>{_e(f.change)} {_e(f.path)}</li>" for f in transcript.files)
        out.append("</ul>")
    if transcript.usage:
        out.append(
            "<h2>Usage</h2><table><tr><th>Model</th><th>Requests</th><th>Input</th>"
            "<th>Output</th><th>Cached</th><th>Total</th><th>Cost (estimate)</th></tr>"
        )
        out.extend(
            f"<tr><td>{_e(u.model)}</td><td>{u.requests:,}</td><td>{u.input_tokens:,}</td>"
            f"<td>{u.output_tokens:,}</td><td>{u.cached_tokens:,}</td>"
            f"<td>{u.total_tokens:,}</td><td>{_e(_money(u.cost_usd))}</td></tr>"
            for u in transcript.usage
        )
        out.append(
            f'</table><p class="note">Costs are estimates: prices as of '
            f"{_e(transcript.prices_as_of)} from {_e(transcript.prices_source)}.</p>"
        )
    out.append("</body></html>\n")
    return "".join(out)


def to_html(
    conversation: Loaded,
    *,
    cwd: str | None = None,
    prices: PriceTable | None = None,
    secrets: Iterable[str] | None = None,
    redact: bool = False,
) -> str:
    """A loaded session as one self-contained, script-free HTML page.

    ``secrets`` are masked wherever they appear (by default the secret values of this
    process's environment: docs/security.md); ``redact`` also takes out API keys, tokens,
    e-mail addresses and the home folder (`gemwire.sessions._redact`, docs/sessions.md).
    """
    transcript = build_transcript(
        conversation, cwd=cwd, prices=prices, secrets=secrets, redact=redact
    )
    return render_html(transcript)
