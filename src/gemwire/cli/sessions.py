"""``gemwire sessions list|show|export``: saved agent sessions from the command line.

``--agent`` picks whose (default ``gemini``; ``all``: every agent gemwire reads the sessions
of). Exit status: 0 done; 1 no such session, the file cannot be read, or it is not a session;
2 usage error, or an export format an agent's sessions do not have yet. Everything shown to a person goes through `terminal_safe`; an export
written to a terminal too (JSON lines stay the same JSON: what a terminal would act on is
escaped as ``\\uXXXX``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, BinaryIO

import click

from gemwire.cli.options import LazyChoice, output_options
from gemwire.cli.safe_text import terminal_safe, terminal_safe_json

if TYPE_CHECKING:  # the sessions stack loads when a command runs (a fast `gemwire --help`)
    from gemwire.sessions import LoadedSession, SessionInfo, SessionSource

__all__ = (
    "AGENT_CHOICES",
    "agent_option",
    "agent_sources",
    "check_window",
    "sessions",
    "warn_unread",
    "when_option",
)


def _session_agents() -> Sequence[str]:
    from gemwire.sessions import AGENTS

    return (*AGENTS, "all")


AGENT_CHOICES = LazyChoice(_session_agents)
"""``--agent``: every agent of `gemwire.sessions.AGENTS` (the registry's), and ``all``."""

agent_option = click.option(
    "--agent",
    type=AGENT_CHOICES,
    default="gemini",
    show_default=True,
    help="Whose saved sessions: one agent's, or all (every agent gemwire reads).",
)


def agent_sources(agent: str, gemini_home: str | None) -> list[SessionSource]:
    """The sources ``--agent`` names; ``--gemini-home`` is Gemini's home, the others find
    theirs as their agent does."""
    from gemwire.errors import InvalidOptions
    from gemwire.sessions import source, sources

    try:
        return [source(s.agent, gemini_home) if s.agent == "gemini" else s for s in sources(agent)]
    except InvalidOptions as exc:
        raise click.UsageError(terminal_safe(str(exc))) from exc


def warn_unread(homes: list[SessionSource]) -> None:
    """A line on stderr for each folder or database of a home that could not be read: its
    sessions would otherwise seem not to exist."""
    from gemwire.sessions import AGENT_NAMES

    for home in homes:
        for path, why in home.unread.items():
            shown = path.encode(errors="surrogateescape").decode(errors="replace")
            name = AGENT_NAMES.get(home.agent, home.agent)
            line = f"gemwire: cannot read {name}'s sessions in {shown}: {why}"
            click.echo(terminal_safe(line), err=True)


def when_option(ctx: click.Context, param: click.Parameter, value: str | None) -> date | None:
    """``--since``/``--until``: a day or a moment (`gemwire.sessions.parse_when`)."""
    if value is None:
        return None
    from gemwire.sessions import parse_when

    try:
        return parse_when(value, datetime.now().astimezone())
    except ValueError as exc:
        raise click.BadParameter(terminal_safe(str(exc))) from None


class _UsageLine(click.ClickException):
    """A usage error said in one line, exit status 2 (click's `UsageError` adds the
    command's usage)."""

    exit_code = 2


def check_window(since: date | None, until: date | None) -> None:
    """``--since`` after ``--until`` is a usage error, said in one line (exit status 2):
    nothing is between them, and an empty answer would look like an answer."""
    from gemwire.sessions import crossed

    if crossed(since, until):
        raise _UsageLine(f"--since {_when(since)} is after --until {_when(until)}")


def _when(bound: date | None) -> str:
    if isinstance(bound, datetime):
        return bound.isoformat(sep=" ", timespec="minutes")
    return str(bound)


_home_option = click.option(
    "--gemini-home",
    type=click.Path(file_okay=False),
    help="The folder holding .gemini (default: GEMINI_CLI_HOME, else your home).",
)
_project_option = click.option(
    "--project",
    type=click.Path(file_okay=False),
    help="The project's root folder (default: here).",
)


@click.group()
def sessions() -> None:
    """List, show, export and search saved sessions (every agent gemwire reads).

    \b
    gemwire sessions list
    gemwire sessions list --agent all --all-projects
    gemwire sessions show latest
    gemwire sessions export 2 --format claude -o chat.jsonl
    gemwire sessions search "connection refused"
    """


def _find(
    homes: list[SessionSource], ref: str, project: str | None
) -> tuple[SessionInfo, SessionSource | None]:
    """The session ``ref`` names, and the home it is in: ``find`` in each home. A number
    several agents' sessions have is an error naming them; ``latest`` is the session updated
    last, whoever's. A session file named on the command line may also lie outside the
    homes (a copy, an attachment): pointing at it is the user's explicit choice (its home:
    ``None``)."""
    from gemwire.errors import SessionError
    from gemwire.sessions import read_session_info

    first: SessionError | None = None
    found: list[tuple[SessionInfo, SessionSource]] = []
    for home in homes:
        try:
            found.append((home.find(ref, project), home))
        except SessionError as exc:
            first = first or exc
    if len(found) > 1 and ref.strip() == "latest":
        return max(found, key=lambda each: _updated(each[0]))
    if len(found) > 1:
        named = ", ".join(f"{info.agent}'s {info.id}" for info, _ in found)
        raise _UsageLine(
            terminal_safe(f"{ref} names a session of more than one agent ({named}): add --agent")
        )
    if found:
        return found[0]
    try:
        if not (_names_a_file(ref) and os.path.exists(ref)):  # a FIFO too: said why
            raise first or SessionError(f"no session {ref}")
        return read_session_info(ref), None
    except SessionError as exc:
        raise click.ClickException(terminal_safe(str(exc))) from exc


def _updated(info: SessionInfo) -> datetime:
    """When a session was last written, to order sessions of different agents."""
    try:
        moment = datetime.fromisoformat(info.last_updated or info.start_time or "")
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo is not None else moment.astimezone()


def _names_a_file(ref: str) -> bool:
    return os.sep in ref or ref.endswith((".json", ".jsonl"))


def _load(
    path: str, home: SessionSource | None = None, *, keep_originals: bool = False
) -> LoadedSession:
    """The session at ``path``, loaded by ``home``'s agent (by its format when ``None``); a
    file that is not one (empty, binary, cut short, a FIFO) is an error."""
    from gemwire.errors import SessionError
    from gemwire.sessions import load_session, whose

    try:
        conversation = (
            load_session(path, keep_originals=keep_originals)
            if home is None
            else home.load(path, keep_originals=keep_originals)
        )
    except SessionError as exc:
        raise click.ClickException(terminal_safe(str(exc))) from exc
    if conversation.session_id is None:
        problems = conversation.problems
        # Each different reason once: a text file has the same one on every line.
        why = "; ".join(dict.fromkeys(p.message for p in problems[:3])) or "no session id"
        more = f" (and {len(problems) - 3} more problems)" if len(problems) > 3 else ""
        raise click.ClickException(
            terminal_safe(f"{path} is not a {whose(conversation)} session: {why}{more}")
        )
    return conversation


def _title(info: SessionInfo) -> str:
    text = " ".join((info.summary or info.first_prompt or "(no prompt)").split())
    return text if len(text) <= 80 else text[:77] + "..."


@sessions.command("list")
@agent_option
@_home_option
@_project_option
@click.option("--all-projects", is_flag=True, help="Every project in the Gemini home.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session and line.")
def list_(
    agent: str, gemini_home: str | None, project: str | None, all_projects: bool, as_json: bool
) -> None:
    """The sessions an agent would resume (`gemini --resume`), numbered as it numbers them."""
    import msgspec

    from gemwire.sessions import json_safe

    if all_projects and project:
        raise click.UsageError("--project and --all-projects exclude each other")
    homes = agent_sources(agent, gemini_home)
    found = [
        info
        for home in homes
        for info in (home.all_sessions() if all_projects else home.sessions(project))
    ]
    warn_unread(homes)
    out = sys.stdout
    for info in found:
        if as_json:
            sys.stdout.buffer.write(msgspec.json.encode(json_safe(info)) + b"\n")
            continue
        where = f"{info.agent}  " if agent == "all" else ""
        where += f"{info.project or '?'}  " if all_projects else ""
        count = f"{info.messages} messages" + (
            f", {len(info.subagents)} subagents" if info.subagents else ""
        )
        line = f"{where}{info.index:>3}. {_title(info)} ({info.last_updated}, {count}) [{info.id}]"
        out.write(terminal_safe(line) + "\n")
    if not found and not as_json:
        click.echo("No sessions found.", err=True)


@sessions.command()
@click.argument("ref")
@agent_option
@_home_option
@_project_option
@output_options
def show(
    ref: str,
    agent: str,
    gemini_home: str | None,
    project: str | None,
    as_json: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Show session REF: an id, an index from `list`, latest, or a session file's path.

    The same view as a live run (as JSON lines with --json). A subagent's events follow the
    call that ran it (they carry its ``parent_call_id``); subagents no call names, last.
    """
    from gemwire._normalize.masking import Masker, known_secrets
    from gemwire.cli.live import LiveOutput, open_output
    from gemwire.events import Event, SessionStarted
    from gemwire.sessions import nested_events

    info, home = _find(agent_sources(agent, gemini_home), ref, project)
    conversation = _load(info.path, home)
    output = open_output(
        as_json=as_json, quiet=quiet, verbose=verbose, cwd=info.project, timed=False
    )
    headers = not (as_json or quiet)
    masker = Masker(known_secrets(os.environ))  # as export does

    def show_event(event: Event) -> None:
        output.show(masker.event(event) if masker else event)

    def header(text: str) -> None:
        if not headers:
            return
        if isinstance(output, LiveOutput):  # above the view, not into its spinner's line
            output.heading(text)
        else:
            click.echo(terminal_safe(text))

    with output:
        header(f"# {info.path}")
        shown = set()
        for event in nested_events(conversation, cwd=info.project):
            if isinstance(event, SessionStarted):
                shown.add(event.session_id)
                if isinstance(event.parent_call_id, str):
                    header(f"\n# subagent {event.session_id} (call {event.parent_call_id})")
            show_event(event)
        for sub in info.subagents:  # those no call names
            if sub.id in shown:
                continue
            header(f"\n# subagent {sub.id}: {sub.path}")
            for event in _load(sub.path, home).events(cwd=info.project):
                show_event(event)
        output.close()


@sessions.command()
@click.argument("ref")
@agent_option
@_home_option
@_project_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["events", "claude", "html", "markdown"]),
    default="events",
    show_default=True,
    help="Normalized events or Claude-compatible messages (JSON lines), or a transcript "
    "to read: one self-contained HTML page, or Markdown.",
)
@click.option(
    "--prices",
    type=click.Path(dir_okay=False),
    help="html/markdown: a price table (JSON or TOML) laid over gemwire's own.",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Take out API keys, tokens, e-mail addresses and your home folder (the rules: "
    "docs/sessions.md), to share the export.",
)
@click.option("-o", "--output", type=click.File("wb"), default="-", help="Write here (- stdout).")
def export(
    ref: str,
    agent: str,
    gemini_home: str | None,
    project: str | None,
    fmt: str,
    prices: str | None,
    redact: bool,
    output: BinaryIO,
) -> None:
    """Export session REF: JSON lines, or a transcript (HTML, Markdown) with its subagents.

    \b
    gemwire sessions export latest --format html -o session.html
    gemwire sessions export latest --format markdown --redact > to-share.md
    """
    from gemwire.errors import InvalidOptions, SessionError
    from gemwire.sessions import export_lines, load_prices

    info, home = _find(agent_sources(agent, gemini_home), ref, project)
    conversation = _load(info.path, home, keep_originals=fmt == "claude")
    try:
        table = load_prices(prices) if fmt in ("html", "markdown") else None
        lines = export_lines(
            conversation,
            fmt,  # type: ignore[arg-type]  # one of EXPORT_FORMATS, checked by click
            cwd=info.project,
            prices=table,
            redact=redact,
        )
        if _is_terminal(output):
            lines = _for_terminal(lines, as_json=fmt in ("events", "claude"))
        output.writelines(lines)
    except InvalidOptions as exc:
        raise click.UsageError(terminal_safe(str(exc))) from exc
    except SessionError as exc:
        raise click.ClickException(terminal_safe(str(exc))) from exc


def _is_terminal(output: BinaryIO) -> bool:
    try:
        return output.isatty()
    except (OSError, ValueError):  # closed, or not a real file
        return False


def _for_terminal(lines: Iterator[bytes], *, as_json: bool) -> Iterator[bytes]:
    """What a person reads on a terminal: nothing in it acts on the terminal."""
    clean = terminal_safe_json if as_json else terminal_safe
    for line in lines:
        yield clean(line.decode(errors="replace")).encode()


@sessions.command()
@click.argument("text")
@click.option(
    "--agent",
    type=AGENT_CHOICES,
    default="all",
    show_default=True,
    help="Whose saved sessions: one agent's, or all (every agent gemwire reads).",
)
@_home_option
@click.option(
    "--project", type=click.Path(file_okay=False), help="Only this project's (its root folder)."
)
@click.option(
    "--since",
    metavar="WHEN",
    callback=when_option,
    help="Sessions active since this day (2026-11-01, today, yesterday) or moment (7d, 12h, "
    "2026-11-01T09:00), as usage reads it.",
)
@click.option("--until", metavar="WHEN", callback=when_option, help="Active until: as --since.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per session and line.")
def search(
    text: str,
    agent: str,
    gemini_home: str | None,
    project: str | None,
    since: date | None,
    until: date | None,
    as_json: bool,
) -> None:
    """Find the sessions whose prompts, answers or tool calls hold TEXT (any case, literally).

    Each result names its session: `gemwire sessions export ID --agent AGENT --project DIR
    --format html` opens it. Exit status: 0 found, 1 nothing found, 2 usage error.

    \b
    gemwire sessions search "connection refused"
    gemwire sessions search pytest --agent claude --since 7d --json
    """
    import msgspec

    from gemwire.sessions import search as find

    check_window(since, until)
    found = False
    out = sys.stdout
    homes = agent_sources(agent, gemini_home)
    for hit in find(text, homes, project=project, since=since, until=until):
        found = True
        if as_json:
            out.buffer.write(msgspec.json.encode(hit.document()) + b"\n")
            out.flush()
            continue
        when = (hit.last_updated or hit.start_time or "?")[:16].replace("T", " ")
        title = " ".join((hit.title or "(no prompt)").split())
        title = title if len(title) <= 70 else title[:67] + "..."
        more = f", {hit.matches} matches" if hit.matches > 1 else ""
        lines = [f"{hit.agent}  {when}  {title}  [{hit.id}{more}]"]
        lines += [f"    {quote.field}: {quote.text}" for quote in hit.quotes]
        lines.append(f"    open: {hit.open_command()}")
        out.write(terminal_safe("\n".join(lines)) + "\n")
        out.flush()
    warn_unread(homes)
    if not found:
        if not as_json:
            click.echo("No sessions hold that text.", err=True)
        sys.exit(1)
