"""``gemwire run``: Gemini CLI on a prompt, shown live (or as JSON lines, or just the answer)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from gemwire.cli.exit_codes import (
    EXIT_BUDGET,
    EXIT_CANCELLED,
    EXIT_NOT_FOUND,
    EXIT_TURN_FAILED,
    exit_status,
)
from gemwire.cli.options import COUNT, SECONDS, approval_options, output_options

if TYPE_CHECKING:
    from gemwire.runners.gemini_options import McpServer

__all__ = ("run",)


def _mcp_servers(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[McpServer, ...] | None:
    """``--mcp-servers FILE``: the servers it names, as settings.json's ``mcpServers``."""
    if value is None:
        return None
    from gemwire.errors import InvalidOptions
    from gemwire.runners._gemini_home import servers_from_settings

    try:
        return servers_from_settings(Path(value).read_bytes())
    except OSError as exc:
        raise click.BadParameter(f"cannot read {value}: {exc.strerror}") from exc
    except InvalidOptions as exc:
        raise click.BadParameter(f"{value}: {exc}") from exc


def _flags(ctx: click.Context) -> Callable[[str], str]:
    """A `GeminiOptions` field as this command's flag for it (`OptionProblem.message`)."""
    flags = {p.name: "/".join(p.opts) for p in ctx.command.params if isinstance(p, click.Option)}
    return lambda field: flags.get(field, field)


@click.command()
@click.argument("prompt")
@click.option("-m", "--model", help="Model or alias (auto, pro, flash, flash-lite).")
@approval_options("Which tools run without asking; headless, the rest are not offered.")
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False),
    help="The workspace to run in (default: here).",
)
@click.option("--include-directories", multiple=True, help="More workspace folders (repeatable).")
@click.option("--policy", "policy_files", multiple=True, help="Policy file or folder (repeatable).")
@click.option(
    "--allowed-tools", multiple=True, help="Tools allowed without asking (deprecated upstream)."
)
@click.option("-e", "--extensions", multiple=True, help="Extensions to use (repeatable).")
@click.option("-s", "--sandbox", is_flag=True, help="Run tools in Gemini's sandbox.")
@click.option("-r", "--resume", help="Resume a session: latest, an index, or a session id.")
@click.option("--session-id", metavar="ID", help="Start a new session with this id.")
@click.option(
    "--session-file",
    metavar="FILE",
    help="Continue the session saved in this file (a session-*.jsonl).",
)
@click.option(
    "--admin-policy",
    "admin_policy_files",
    metavar="PATH",
    multiple=True,
    help="Admin policy file or folder (repeatable).",
)
@click.option(
    "--allowed-mcp-server-names",
    metavar="NAME",
    multiple=True,
    help="Start only these MCP servers (repeatable).",
)
@click.option(
    "--mcp-servers",
    type=click.Path(dir_okay=False),
    callback=_mcp_servers,
    help="More MCP servers for this run: a JSON file as settings.json's mcpServers.",
)
@click.option("--skip-trust", is_flag=True, help="Trust the workspace for this run.")
@click.option(
    "-w",
    "--worktree",
    metavar="NAME",
    help='Run in a new git worktree NAME ("": a generated one; needs experimental.worktrees).',
)
@click.option(
    "--raw-output", is_flag=True, help="Let the model's text through unsanitized (ANSI too)."
)
@click.option(
    "--system-prompt-file",
    type=click.Path(exists=True, dir_okay=False, resolve_path=True),
    help="Use this file as the system prompt (GEMINI_SYSTEM_MD).",
)
@click.option(
    "--gemini-arg",
    "extra_args",
    metavar="ARG",
    multiple=True,
    help="One more gemini argument, e.g. --gemini-arg=--debug (repeatable; not the prompt, "
    "nor a flag gemwire owns).",
)
@click.option("--gemini-home", help="The folder holding .gemini (GEMINI_CLI_HOME).")
@click.option("--executable", help="The gemini executable to run.")
@click.option("--timeout", type=SECONDS, help="Seconds for the whole run.")
@click.option("--idle-timeout", type=SECONDS, help="Seconds without output before stopping.")
@click.option("--max-tool-calls", type=COUNT, help="Stop after this many tool calls.")
@click.option("--max-model-turns", type=COUNT, help="Stop after this many model turns.")
@click.option("--max-rate-limit-retries", type=COUNT, help="Stop after this many 429 retries.")
@click.option(
    "-o",
    "--output-format",
    type=click.Choice(["stream-json", "json"]),
    help="What to ask Gemini CLI for (json: the answer's last turn only, no tool calls).",
)
@click.option("--server", help="Run on this `gemwire serve` server (its URL) instead of here.")
@click.option("--token", envvar="GEMWIRE_TOKEN", help="The server's token (also $GEMWIRE_TOKEN).")
@click.option("--agent", help="The server's agent to run (with --server; default: gemini).")
@output_options
@click.pass_context
def run(
    ctx: click.Context,
    /,
    prompt: str,
    yolo: bool,
    as_json: bool,
    quiet: bool,
    verbose: bool,
    include_directories: tuple[str, ...],
    policy_files: tuple[str, ...],
    allowed_tools: tuple[str, ...],
    extensions: tuple[str, ...],
    server: str | None,
    token: str | None,
    agent: str | None,
    **options: object,
) -> None:
    """Run Gemini CLI on PROMPT (- reads it from stdin) and show what happens.

    Defaults for the options come from `gemwire config` (file, then GEMWIRE_* variables).

    \b
    gemwire run "fix the failing test" --approval-mode auto_edit
    gemwire run --json -y "summarize README.md" > events.jsonl
    gemwire run -q "one word for blue" | tr a-z A-Z
    gemwire run --server http://build-box:8765 --agent claude "fix the failing test"
    """

    from gemwire import (
        AgentNotFound,
        GeminiOptions,
        GemwireError,
        InvalidOptions,
        PromptTooLarge,
        UnsupportedVersion,
        find_gemini,
    )
    from gemwire.cli.gemini_run import show_gemini_run
    from gemwire.cli.live import open_output
    from gemwire.runners.gemini_checks import option_problem, version_problem

    if prompt == "-":
        prompt = sys.stdin.read()
    if yolo:
        # -y beats a configured approval mode; it contradicts one given as a flag.
        given = ctx.get_parameter_source("approval_mode") == ParameterSource.COMMANDLINE
        if options["approval_mode"] not in (None, "yolo") and given:
            raise click.UsageError("--yolo and --approval-mode disagree")
        options["approval_mode"] = "yolo"
    if server is not None or agent is not None:
        from gemwire.cli.remote_run import run_from_command

        run_from_command(ctx, prompt, server, token, agent, as_json, quiet, verbose, options)
    run_options = GeminiOptions(
        include_directories=include_directories,
        policy_files=policy_files,
        allowed_tools=allowed_tools,
        extensions=extensions,
        **{k: v for k, v in options.items() if v is not None},  # type: ignore[arg-type]
    )
    cwd = str(Path(run_options.cwd or os.getcwd()).resolve())
    try:
        # What the run would refuse, named as this command's flags; the CLI only once the
        # options are right, and then what its version lacks of them.
        problem = option_problem(run_options)
        if problem is None:
            version = find_gemini(run_options.executable, cwd=cwd).version
            problem = version_problem(run_options, version) if version else None
        if problem is not None:
            raise click.UsageError(problem.message(_flags(ctx)))
        output = open_output(as_json=as_json, quiet=quiet, verbose=verbose, cwd=cwd)
        result = show_gemini_run(prompt, run_options, output)
    except (AgentNotFound, UnsupportedVersion) as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    except (PromptTooLarge, InvalidOptions) as exc:
        raise click.UsageError(str(exc)) from exc
    except GemwireError as exc:  # nothing started: an unsafe lock folder, no resources
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_TURN_FAILED)
    if run_options.resume and result.error and "--list-sessions" in result.error.message:
        # Gemini's hint names its own flag; this command takes what `sessions list` shows.
        click.echo(
            "gemwire: `gemwire sessions list` shows the sessions here, numbered as "
            "-r/--resume takes them (an index, a session id, or latest)",
            err=True,
        )
    status = exit_status(result)
    # A signal exited above; with a budget set, only the budget cancels the run.
    budgeted = run_options.max_tool_calls is not None or run_options.max_model_turns is not None
    sys.exit(EXIT_BUDGET if status == EXIT_CANCELLED and budgeted else status)
