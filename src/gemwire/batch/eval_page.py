"""An eval's report as one self-contained page, each attempt linked to its transcript.

    write_page("out", "report.html")   # report.html, and report-attempts/<attempt>.html

The page: per agent, the pass rate with its 95 % confidence interval (Wilson's, over the
graded attempts), pass@k, reward, errors, tokens, cost and time; then a task-by-agent matrix
whose cells link each attempt to its transcript, drawn from its events as ``sessions export``
draws a saved session. Like those transcripts it has no script at all, and its
Content-Security-Policy forbids scripts, requests and external assets: every text from the
results is escaped.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from gemwire.batch.eval import parse_attempt_id
from gemwire.batch.eval_report import AgentReport, EvalReport, report
from gemwire.batch.output import read_results
from gemwire.batch.results import TaskResult
from gemwire.errors import BatchOutputError
from gemwire.events import Event, decode_event
from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.sessions import Problem
from gemwire.sessions._html import render_html
from gemwire.sessions._transcript import Transcript, build_transcript

__all__ = ("render_page", "wilson", "write_page")

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
_Z95 = 1.959964
_NOTE = (
    '<p class="note">pass@k: the unbiased estimator of Chen et al. 2021, averaged over the '
    "tasks with k graded attempts or more. The pass rate's interval is Wilson's, over the "
    "graded attempts. An attempt whose verifier crashed or timed out has no grade: it is an "
    "error, not a fail. Costs are gemwire's estimates from its price table; the agents' own "
    "are beside them where they reported one.</p>"
)
_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.3em .6em}
th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
.ci{color:#666;font-size:90%}a.a{display:inline-block;margin:0 .15em;padding:0 .35em;
border-radius:3px;text-decoration:none;color:#fff}a.passed{background:#2a7d2a}
a.failed{background:#b03030}a.error{background:#a06000}p.note{color:#555}
"""


def wilson(passed: int, graded: int) -> tuple[float, float] | None:
    """The 95 % Wilson score interval of a pass rate (``None`` for no graded attempt)."""
    if graded == 0:
        return None
    rate, z2 = passed / graded, _Z95 * _Z95
    centre = (rate + z2 / (2 * graded)) / (1 + z2 / graded)
    spread = _Z95 * math.sqrt(rate * (1 - rate) / graded + z2 / (4 * graded * graded))
    spread /= 1 + z2 / graded
    return max(0.0, centre - spread), min(1.0, centre + spread)


@dataclass(frozen=True)
class _Attempt:
    """One attempt's events, as the transcript builder reads a saved session."""

    agent: str
    path: str
    session_id: str | None
    logged: list[Event]
    problems: list[Problem] = field(default_factory=list)
    summary: str | None = None
    start_time: str | None = None
    last_updated: str | None = None

    def events(self, *, cwd: str | None = None) -> Iterator[Event]:
        return iter(self.logged)


def write_page(output: str | Path, page: str | Path) -> list[Path]:
    """Write the report of the eval in ``output`` to ``page`` and each attempt's transcript
    beside it (``<page's name>-attempts/``); the files written, the page first."""
    page = Path(page)
    folder = page.with_name(f"{page.stem}-attempts")
    results = read_results(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written = [page]
        for result in results:
            path = folder / f"{result.task_id}.html"
            path.write_text(render_html(_transcript(Path(output), result)))
            written.append(path)
        page.write_text(render_page(report(results), results, f"{folder.name}/"))
    except OSError as exc:
        raise BatchOutputError(f"cannot write {page}: {exc.strerror or exc}") from exc
    return written


def _transcript(output: Path, result: TaskResult) -> Transcript:
    log = output / "events" / f"{result.task_id}.jsonl"
    lines = log.read_bytes().splitlines() if log.is_file() else []
    try:
        events = [decode_event(line) for line in lines if line.strip()]
    except UNDECODABLE as exc:
        raise BatchOutputError(f"{log} is damaged: {why_undecodable(exc)}") from exc
    attempt = _Attempt(
        agent=result.agent, path=str(log), session_id=result.session_id, logged=events
    )
    return build_transcript(attempt, events=events)


def render_page(built: EvalReport, results: list[TaskResult], links: str) -> str:
    """The page of a report; attempt ``x`` links to ``{links}x.html``."""
    tasks = sorted({row.task for row in built.tasks})
    title = f"gemwire eval: {len(tasks)} tasks, {len(built.agents)} agents, {len(results)} attempts"
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        *_agents(built),
        *_matrix(built, results, tasks, links),
        _NOTE,
        "</body></html>\n",
    ]
    return "".join(out)


def _agents(built: EvalReport) -> Iterator[str]:
    most = max((len(a.pass_at) for a in built.agents.values()), default=0)
    ks = list(range(1, most + 1))
    yield '<h2>Agents</h2><table id="agents"><tr><th>agent</th><th>attempts</th>'
    yield "<th>pass rate (95 % CI)</th>"
    yield "".join(f"<th>pass@{k}</th>" for k in ks)
    yield "<th>reward</th><th>errors</th><th>tokens</th><th>cost</th><th>agent's cost</th>"
    yield "<th>time</th><th>time per attempt</th></tr>"
    passed: defaultdict[str, int] = defaultdict(int)
    for row in built.tasks:
        passed[row.agent] += row.passed
    for name, agent in built.agents.items():
        yield f"<tr><td>{_e(name)}</td><td class=n>{_graded(agent)}</td>"
        yield f"<td class=n>{_rate(passed[name], agent.graded)}</td>"
        yield "".join(f"<td class=n>{_share(agent.pass_at.get(str(k)))}</td>" for k in ks)
        reward = "-" if agent.reward_mean is None else f"{agent.reward_mean:.2f}"
        errors = ", ".join(f"{kind} {n}" for kind, n in agent.errors.items()) or "-"
        yield f"<td class=n>{reward}</td><td>{_e(errors)}</td><td class=n>{agent.tokens:,}</td>"
        yield f"<td class=n>{_money(agent.cost_usd)}</td><td class=n>{_money(agent.agent_cost_usd)}</td>"
        per = agent.seconds / agent.attempts if agent.attempts else 0.0
        yield f"<td class=n>{agent.seconds:.1f} s</td><td class=n>{per:.1f} s</td></tr>"
    yield "</table>"


def _matrix(
    built: EvalReport, results: list[TaskResult], tasks: list[str], links: str
) -> Iterator[str]:
    agents = list(built.agents)
    attempts: dict[tuple[str, str], list[tuple[int, TaskResult]]] = defaultdict(list)
    for result in results:
        task, agent, n = parse_attempt_id(result.task_id)
        attempts[task, agent].append((n, result))
    rows = {(row.task, row.agent): row for row in built.tasks}
    yield '<h2>Tasks</h2><table id="tasks"><tr><th>task</th>'
    yield "".join(f"<th>{_e(a)} (passed/graded)</th>" for a in agents)
    yield "</tr>"
    for task in tasks:
        yield f"<tr><td>{_e(task)}</td>"
        for agent in agents:
            row = rows.get((task, agent))
            if row is None:
                yield "<td>-</td>"
                continue
            badges = "".join(_badge(n, r, links) for n, r in sorted(attempts[task, agent]))
            yield f"<td>{row.passed}/{row.graded} {badges}</td>"
        yield "</tr>"
    yield "</table>"


def _badge(n: int, result: TaskResult, links: str) -> str:
    grade = result.grade
    if grade is None:  # a task without verify passes when its turn ended ok
        kind = why = "passed" if result.ok else "failed"
    elif grade.reward is None:
        kind, why = "error", f"verifier {grade.status}"
    else:
        kind = why = "passed" if grade.reward >= 1 else "failed"
    if result.error is not None:
        why += f"; agent {result.error.kind}"
    href = _e(links + result.task_id + ".html")
    label = f"attempt {n}: {why}, {result.duration_s:.1f} s"
    return f'<a class="a {kind}" href="{href}" title="{_e(label)}">{n}</a>'


def _graded(agent: AgentReport) -> str:
    return (
        str(agent.attempts)
        if agent.graded == agent.attempts
        else f"{agent.graded}/{agent.attempts}"
    )


def _rate(passed: int, graded: int) -> str:
    interval = wilson(passed, graded)
    if interval is None:
        return "-"
    low, high = interval
    return f'{passed / graded:.0%} <span class="ci">({low:.0%} to {high:.0%})</span>'


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _e(text: str) -> str:
    return escape(text, quote=True)
