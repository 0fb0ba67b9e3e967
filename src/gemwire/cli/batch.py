"""``gemwire batch``: many tasks through Gemini CLI, resumable; ``batch report`` shows one again."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, NoReturn

import click

from gemwire.cli.exit_codes import EXIT_IO, EXIT_NOT_FOUND, EXIT_QUOTA, EXIT_TURN_FAILED
from gemwire.cli.options import AGENT_NAMES, SECONDS, approval_options

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager

    from gemwire.batch import Batch, BatchSummary, Progress, TaskResult

__all__ = ("batch", "run_shown")


class _RunByDefault(click.Group):
    """``gemwire batch TASKS`` is ``gemwire batch run TASKS``."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


ray_option = click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ADDRESS]",
    help="Run on a Ray cluster (ADDRESS as for ray.init; none: RAY_ADDRESS or a local one).",
)
"""``--ray [ADDRESS]``, as batch and eval take it."""


@click.group(cls=_RunByDefault)
def batch() -> None:
    """Run many tasks (a JSONL file) through Gemini CLI; re-run to resume.

    \b
    gemwire batch tasks.jsonl -o out -j 8      run, or resume, into out/
    gemwire batch report out                   the summary again
    """


@batch.command("run")
@click.argument("tasks_file", metavar="TASKS", type=click.Path(dir_okay=False))
@click.option("-o", "--out", required=True, help="Output folder (results.jsonl, events/).")
@click.option("-j", "--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--mode",
    type=click.Choice(["process", "acp"]),
    default="process",
    show_default=True,
    help="process: one gemini -p per task; acp: long-lived gemini --acp serving many tasks.",
)
@click.option(
    "--agent",
    type=AGENT_NAMES,
    help="acp mode with this built-in agent (docs/agents.md) for tasks that name none.",
)
@click.option(
    "--agents",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="acp mode: agent processes at most.",
)
@click.option("-m", "--model", help="Model for tasks that name none.")
@approval_options("Approval mode for tasks that name none.")
@click.option("--timeout", type=SECONDS, help="Seconds per task.")
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Attempts for a task that ends rate limited or crashed.",
)
@ray_option
@click.option("--gemini-home", help="The folder holding .gemini (GEMINI_CLI_HOME).")
@click.option("--executable", help="The gemini executable to run.")
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Also run again the tasks that failed in an earlier run (batch report lists them).",
)
@click.option("--json", "as_json", is_flag=True, help="Print progress as JSON lines.")
def run(
    tasks_file: str,
    out: str,
    concurrency: int,
    mode: str,
    agent: str | None,
    agents: int,
    ray_address: str | None,
    yolo: bool,
    max_attempts: int,
    retry_failed: bool,
    as_json: bool,
    **gemini: Any,
) -> None:
    """Run the tasks in TASKS (JSON lines) not yet finished in the output folder.

    Each line: {"id": ..., "prompt": ..., "workspace" or "template": ..., "model": ...,
    "approval_mode": ..., "timeout": ..., "max_turns": ...}; docs/batch.md.
    """
    from gemwire import AgentNotFound, BatchOutputError, GeminiOptions, InvalidOptions
    from gemwire.batch import BatchOptions, read_tasks, run_batch

    if yolo:
        gemini["approval_mode"] = "yolo"
    try:
        tasks = read_tasks(tasks_file)
        options = BatchOptions(
            mode="acp" if agent else mode,  # type: ignore[arg-type]
            agent=agent,
            agents=agents,
            concurrency=concurrency,
            ray=ray_address is not None,
            ray_address=ray_address or None,
            max_attempts=max_attempts,
            retry_failed=retry_failed,
            gemini=GeminiOptions(**{k: v for k, v in gemini.items() if v is not None}),
        )
    except InvalidOptions as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        status = run_shown(len(tasks), lambda: run_batch(tasks, out, options), as_json=as_json)
    except InvalidOptions as exc:
        raise click.UsageError(str(exc)) from exc
    except AgentNotFound as exc:
        fail(exc, EXIT_NOT_FOUND)
    except BatchOutputError as exc:
        fail(exc, EXIT_IO)
    sys.exit(status)


def fail(exc: Exception, status: int) -> NoReturn:
    """One line on stderr, and the exit status."""
    from gemwire.cli.safe_text import terminal_safe

    click.echo(f"gemwire: {terminal_safe(str(exc))}", err=True)
    sys.exit(status)


@batch.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def report(out: str, as_json: bool) -> None:
    """Show the summary of a batch's output folder OUT, and its failed tasks."""
    import msgspec

    from gemwire import BatchOutputError
    from gemwire.batch import read_results, summarize

    try:
        results = read_results(out)
    except BatchOutputError as exc:
        fail(exc, EXIT_IO)
    if not results:
        raise click.UsageError(f"no finished tasks in {out} (no results.jsonl lines)")
    summary = summarize(results)
    if as_json:
        click.echo(msgspec.json.encode(summary).decode())
        return
    from rich.console import Console

    console = Console(highlight=False)
    _print_summary(summary, console)
    failed = [r for r in results if not r.ok]
    if failed:
        _print_failed(failed, console)


def run_shown(
    total: int, start: Callable[[], AbstractAsyncContextManager[Batch]], *, as_json: bool
) -> int:
    """Run the batch ``start`` starts (of ``total`` tasks) shown on stdout; the exit
    status. ``gemwire eval`` runs its batch through here too."""
    from gemwire.batch import BatchFinished, BatchStopped
    from gemwire.batch.runner import only_gemwire_error
    from gemwire.cli.signals import SignalStop

    display = None if as_json else _Display(total)
    show = _json_line if display is None else display.show
    stop = SignalStop()  # a signal cancels it all: run_batch stops every task cleanly

    async def go() -> BatchSummary | None:
        """The summary; ``None`` when the batch stopped starting tasks (a quota)."""
        stopped, summary = False, None
        async with start() as running:
            async for progress in running:
                show(progress)
                if isinstance(progress, BatchStopped):
                    stopped = True
                elif isinstance(progress, BatchFinished):
                    summary = progress.summary
        return None if stopped else summary

    try:
        summary = stop.run(go)
    except BaseExceptionGroup as group:
        raise only_gemwire_error(group) or group from None
    finally:
        if display is not None:
            display.close()  # what follows goes on lines of its own, not onto the bar's
    if stop.caught is not None:
        click.echo(f"gemwire: batch stopped by {stop.caught.name}; re-run to resume", err=True)
        stop.exit_if_stopped()
    if summary is None:
        return EXIT_QUOTA
    return EXIT_TURN_FAILED if summary.failed else 0


def _json_line(progress: Progress) -> None:
    import msgspec

    sys.stdout.buffer.write(msgspec.json.encode(progress) + b"\n")
    sys.stdout.buffer.flush()


class _Display:
    """A progress bar on a terminal; a line per finished task otherwise."""

    def __init__(self, total: int) -> None:
        from rich.console import Console

        self._console = Console(highlight=False)
        self._total = total
        self._tokens = 0
        self._bar: Any = None
        self._started = time.monotonic()

    def show(self, progress: Progress) -> None:
        from gemwire.batch import (
            BatchBackoff,
            BatchFinished,
            BatchStarted,
            BatchStopped,
            TaskFinished,
            TaskStarted,
        )
        from gemwire.cli.safe_text import terminal_safe

        if isinstance(progress, BatchStarted):
            self._console.print(
                f"batch: {progress.tasks} to run, {progress.skipped} already finished, "
                f"{progress.concurrency} at a time ({progress.mode})"
            )
            if self._console.is_terminal and progress.tasks:
                self._start_bar(progress.tasks)
        elif isinstance(progress, TaskStarted):
            if self._bar is not None:
                self._bar.update(self._bar_task, running=progress.running)
        elif isinstance(progress, TaskFinished):
            result = progress.result
            self._tokens += result.usage.total_tokens if result.usage else 0
            mark = "ok" if result.ok else f"failed ({result.error_kind})"
            if result.grade is not None:  # a task that grades itself (eval)
                mark += f" · {result.grade.status}"
            if self._bar is None:
                self._console.print(f"{result.task_id}: {mark} · {result.duration_s:.1f} s")
            else:
                if not result.ok:
                    self._bar.console.print(f"[red]✗[/] {result.task_id}: {mark}")
                self._bar.update(
                    self._bar_task,
                    completed=progress.done,
                    failed=progress.failed,
                    running=progress.running,
                    tokens=self._tokens,
                    rate=60 * progress.done / max(time.monotonic() - self._started, 1e-3),
                )
        elif isinstance(progress, BatchBackoff):
            self._console.print(
                f"backing off {progress.seconds:.1f} s: {terminal_safe(progress.reason)}",
                markup=False,
            )
        elif isinstance(progress, BatchStopped):
            self._console.print(
                f"stopped starting tasks: {terminal_safe(progress.reason)}", markup=False
            )
        elif isinstance(progress, BatchFinished):
            self.close()
            _print_summary(progress.summary, self._console)
            if progress.remaining:
                self._console.print(f"{progress.remaining} not finished: re-run to resume")

    def close(self) -> None:
        """Take the bar off the screen's last line (a no-op without a bar, or a second time)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _start_bar(self, total: int) -> None:
        self._bar = _progress_bar(self._console)
        self._bar_task = self._bar.add_task(
            "batch", total=total, failed=0, running=0, tokens=0, rate=0.0
        )
        self._bar.start()


WIDE = 120
"""Columns from which the bar also shows tasks per minute and tokens: below, the done and
total, the failures, the elapsed time and the ETA still fit in 80 columns."""


def _progress_bar(console: Any) -> Any:
    """The batch's bar: done/total, failed, running, elapsed and ETA at any width from 80
    columns; tasks per minute and tokens too when the terminal is `WIDE` (re-checked on
    each refresh, so a resized terminal gets the layout that fits)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    def columns(bar: int, wide: bool) -> tuple[Any, ...]:
        counts = "· {task.fields[failed]} failed · {task.fields[running]} running"
        if wide:
            counts += " · {task.fields[rate]:.1f}/min · {task.fields[tokens]} tokens"
        return (
            TextColumn("tasks"),
            BarColumn(bar_width=bar),
            MofNCompleteColumn(),
            TextColumn(counts + " ·"),
            TimeElapsedColumn(),
            TextColumn("· ETA"),
            TimeRemainingColumn(),
        )

    class BatchBar(Progress):
        def make_tasks_table(self, tasks: Any) -> Any:
            self.columns = columns(40, True) if console.width >= WIDE else columns(10, False)
            return super().make_tasks_table(tasks)

    return BatchBar(*columns(10, False), console=console)


def _print_summary(summary: BatchSummary, console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console(highlight=False)
    table = Table(title="batch summary", show_header=False, box=None, padding=(0, 2))
    table.add_row("tasks", f"{summary.tasks} ({summary.ok} ok, {summary.failed} failed)")
    for kind, count in summary.by_error_kind.items():
        table.add_row(f"  {kind}", str(count))
    table.add_row(
        "tokens",
        f"{summary.total_tokens} ({summary.input_tokens} in · {summary.output_tokens} out) · "
        f"p50 {summary.tokens_p50} · p90 {summary.tokens_p90} per task",
    )
    table.add_row(
        "duration",
        f"p50 {summary.duration_p50_s:.1f} s · p90 {summary.duration_p90_s:.1f} s · "
        f"max {summary.duration_max_s:.1f} s",
    )
    console.print(table)


def _print_failed(failed: list[TaskResult], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    from gemwire.cli.safe_text import terminal_safe

    table = Table(title="failed tasks", show_header=False, box=None, padding=(0, 2))
    for result in failed:
        error = result.error
        message = error.message.splitlines()[0] if error and error.message else ""
        cells = (result.task_id, result.error_kind or "unknown", message)
        table.add_row(*(Text(terminal_safe(cell)) for cell in cells))
    console.print(table)
    console.print("re-run with --retry-failed to run them again")
