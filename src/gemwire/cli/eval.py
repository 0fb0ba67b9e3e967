"""``gemwire eval``: every task k times per agent, graded, resumable; ``eval report`` compares."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from gemwire.cli.batch import fail, ray_option, run_shown
from gemwire.cli.exit_codes import EXIT_IO, EXIT_NOT_FOUND, EXIT_TURN_FAILED
from gemwire.cli.options import SECONDS
from gemwire.cli.serve import _agent_command

if TYPE_CHECKING:
    from rich.console import Console

    from gemwire.batch.eval_report import EvalReport

__all__ = ("eval_",)


class _RunByDefault(click.Group):
    """``gemwire eval TASKS`` is ``gemwire eval run TASKS``."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


@click.group("eval", cls=_RunByDefault)
def eval_() -> None:
    """Grade several agents on the same tasks, k attempts each; re-run to resume.

    \b
    gemwire eval tasks.jsonl -o out --agents gemini,qwen -k 5    run, or resume
    gemwire eval report out                                       pass@k, cost, time
    """


def _agent_list(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[str, ...] | None:
    return None if value is None else tuple(n.strip() for n in value.split(",") if n.strip())


@eval_.command("run")
@click.argument("tasks_file", metavar="TASKS", type=click.Path(dir_okay=False))
@click.option("-o", "--out", required=True, help="Output folder (results.jsonl, events/).")
@click.option(
    "--agents",
    "agent_names",
    callback=_agent_list,
    help="Agents, comma-separated: gemini (stream-json) or any ACP agent (docs/agents.md)  "
    "[default: gemini, unless --agent names one]",
)
@click.option(
    "--agent",
    "commands",
    multiple=True,
    callback=lambda ctx, param, value: dict(_agent_command(v) for v in value),
    help="Another agent, an ACP command: NAME=COMMAND (repeatable), as gemwire serve's.",
)
@click.option(
    "--mode",
    help="The mode of the --agent agents' sessions: gemwire refuses one whose modes it does "
    "not know without it (docs/acp.md).",
)
@click.option(
    "-k",
    "attempts",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Attempts of each task by each agent.",
)
@click.option("-j", "--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--processes",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="ACP agents: processes of each agent at most.",
)
@click.option("-m", "--model", help="Model for tasks that name none.")
@click.option("--timeout", type=SECONDS, help="Seconds per attempt (the agent's turn).")
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Tries of an attempt that ends rate limited or crashed.",
)
@click.option("--gemini-home", help="The folder holding .gemini (GEMINI_CLI_HOME).")
@click.option("--executable", help="The gemini executable to run.")
@click.option(
    "--sandbox",
    is_flag=True,
    help="Run each attempt's agent and verifier in a bubblewrap sandbox (docs/eval.md).",
)
@ray_option
@click.option("--json", "as_json", is_flag=True, help="Print progress as JSON lines.")
def run(
    tasks_file: str,
    out: str,
    agent_names: tuple[str, ...] | None,
    commands: dict[str, tuple[str, ...]],
    mode: str | None,
    attempts: int,
    concurrency: int,
    processes: int,
    max_attempts: int,
    sandbox: bool,
    ray_address: str | None,
    as_json: bool,
    **gemini: Any,
) -> None:
    """Run every task in TASKS k times by each agent, grading each attempt with its verify.

    Attempts run with every edit allowed (yolo) unless a task says otherwise: each works in
    its own copy of the task's template. docs/eval.md.
    """
    from gemwire import (
        AgentNotFound,
        BatchOutputError,
        GeminiOptions,
        InvalidOptions,
        SandboxUnavailable,
    )
    from gemwire.batch import BatchOptions, read_tasks
    from gemwire.batch.eval import EvalOptions, expand, run_eval

    try:
        tasks = read_tasks(tasks_file)
        if agent_names is None:
            agent_names = () if commands else ("gemini",)
        options = EvalOptions(
            agents=(*agent_names, *(name for name in commands if name not in agent_names)),
            commands=commands,
            mode=mode,
            k=attempts,
            sandbox=sandbox,
            batch=BatchOptions(
                mode="acp",
                concurrency=concurrency,
                agents=processes,
                max_attempts=max_attempts,
                ray=ray_address is not None,
                ray_address=ray_address or None,
                gemini=GeminiOptions(
                    approval_mode="yolo", **{k: v for k, v in gemini.items() if v is not None}
                ),
            ),
        )
        total = len(expand(tasks, options))
        status = run_shown(total, lambda: run_eval(tasks, out, options), as_json=as_json)
    except InvalidOptions as exc:
        raise click.UsageError(str(exc)) from exc
    except (AgentNotFound, SandboxUnavailable) as exc:
        fail(exc, EXIT_NOT_FOUND)
    except BatchOutputError as exc:
        fail(exc, EXIT_IO)
    # A failed attempt is a result (graded on what it left), not the eval's failure.
    sys.exit(0 if status == EXIT_TURN_FAILED else status)


@eval_.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--format",
    "format_",
    type=click.Choice(["table", "json", "html"]),
    default="table",
    show_default=True,
    help="html: one page (-o FILE), each attempt linked to its transcript beside it.",
)
@click.option("-o", "--output", "page", help="The page's file (--format html).")
def report(out: str, as_json: bool, format_: str, page: str | None) -> None:
    """Compare the agents of an eval's output folder OUT: pass@k, reward, errors, cost, time."""
    import msgspec

    if (format_ == "html") != (page is not None):
        raise click.UsageError("--format html writes a page: give it -o FILE (and -o only to it)")
    as_json = as_json or format_ == "json"

    from gemwire import BatchOutputError
    from gemwire.batch import read_results
    from gemwire.batch.eval_report import report as build

    try:
        results = read_results(out)
        built = build(results)
    except BatchOutputError as exc:
        fail(exc, EXIT_IO)
    except ValueError as exc:  # a line whose id is not an eval attempt's
        raise click.UsageError(f"{out} is not an eval's output folder ({exc})") from exc
    if not results:
        raise click.UsageError(f"no finished attempts in {out} (no results.jsonl lines)")
    if page is not None:
        from gemwire.batch.eval_page import write_page

        try:
            written = write_page(out, page)
        except BatchOutputError as exc:
            fail(exc, EXIT_IO)
        click.echo(f"{page}, and {len(written) - 1} transcripts in {written[0].stem}-attempts/")
        return
    if as_json:
        click.echo(msgspec.json.encode(built).decode())
        return
    from rich.console import Console

    _print_report(built, Console(highlight=False))


def _print_report(built: EvalReport, console: Console) -> None:
    from rich.table import Table

    most = max((len(a.pass_at) for a in built.agents.values()), default=0)
    shown = sorted({1, most} - {0})
    agents = Table(title="agents", title_justify="left")
    for column in (
        "agent",
        "attempts",
        *(f"pass@{k}" for k in shown),
        "reward",
        "errors",
        "tokens",
        "cost",
        "time",
    ):
        agents.add_column(column, justify="left" if column in ("agent", "errors") else "right")
    for name, agent in built.agents.items():
        agents.add_row(
            name,
            f"{agent.graded}/{agent.attempts}"
            if agent.graded != agent.attempts
            else str(agent.attempts),
            *(_share(agent.pass_at.get(str(k))) for k in shown),
            "-" if agent.reward_mean is None else f"{agent.reward_mean:.2f}",
            ", ".join(f"{kind} {n}" for kind, n in agent.errors.items()) or "-",
            f"{agent.tokens:,}",
            "-" if agent.cost_usd is None else f"${agent.cost_usd:.4f}",
            f"{agent.seconds:.1f} s",
        )
    console.print(agents)
    tasks = Table(title="tasks (passed/graded)", title_justify="left")
    tasks.add_column("task")
    names = list(built.agents)
    for name in names:
        tasks.add_column(name, justify="right")
    cells: dict[str, dict[str, str]] = {}
    for row in built.tasks:
        cells.setdefault(row.task, {})[row.agent] = f"{row.passed}/{row.graded}"
    for task, by_agent in cells.items():
        tasks.add_row(task, *(by_agent.get(name, "-") for name in names))
    console.print(tasks)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


@eval_.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--format",
    "format_",
    type=click.Choice(["atif"]),
    default="atif",
    show_default=True,
    help="atif: Harbor's Agent Trajectory Interchange Format (v1.4).",
)
@click.option("-o", "--to", "folder", help="Folder for the files  [default: OUT/atif]")
def export(out: str, format_: str, folder: str | None) -> None:
    """Write each attempt of the eval in OUT as a trajectory file, FOLDER/<attempt>.json."""
    from pathlib import Path

    from gemwire import BatchOutputError
    from gemwire.batch.atif import export_atif

    target = Path(folder) if folder is not None else Path(out, "atif")
    try:
        written = export_atif(out, target)
    except BatchOutputError as exc:
        fail(exc, EXIT_IO)
    click.echo(f"{len(written)} trajectories in {target}")
