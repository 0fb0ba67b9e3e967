"""``gemwire demo``: the real Gemini CLI fixes a bug in a small project, offline, in seconds.

Nothing here is simulated except the model: a `ScriptedModel` on 127.0.0.1 answers what
a model would (read the tests, run them, search, fix with ``replace``, run them again,
write a summary), and the pinned, real Gemini CLI does the work in an `IsolatedGemini`
home and a fresh workspace — reading files, editing them, running the tests in its shell
tool. gemwire runs it and shows it live, then shows what changed on disk and checks that
it matches what the agent reported.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gemwire.cli.exit_codes import EXIT_NOT_FOUND, EXIT_OK, EXIT_TURN_FAILED

if TYPE_CHECKING:
    from rich.console import Console

    from gemwire import RunResult
    from gemwire.events import Event
    from gemwire.testing import IsolatedGemini, Scenario

__all__ = ("DEMO_FILES", "DEMO_PROMPT", "demo", "demo_scenario", "session_history")

DEMO_PROMPT = "The tests fail. Find the bug, fix it, run the tests and write SUMMARY.md."

DEMO_FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": (
        "import unittest\n\nfrom calc import add, mul\n\n\n"
        "class CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n\n"
        'if __name__ == "__main__":\n    unittest.main()\n'
    ),
}

_TESTS = "python3 -B -m unittest -q test_calc 2>&1"
_SUMMARY = "# Summary\n\n`add` subtracted instead of adding; fixed in calc.py. Both tests pass.\n"


def demo_scenario() -> Scenario:
    """What the scripted model answers: a realistic, multi-step agent turn."""
    from gemwire.testing import Delay, FunctionCall, Reply, Scenario, Text, Thought

    pause = Delay(0.3)  # enough to watch it happen, little enough to finish in seconds
    return Scenario(
        files=DEMO_FILES,
        turns=[
            Reply(
                [
                    # stream-json drops thoughts; Gemini's session file keeps them.
                    Thought("**Looking at the tests**\n\nStart from what fails."),
                    Text("Let me look at the tests first."),
                    pause,
                    FunctionCall("read_file", {"file_path": "test_calc.py"}),
                ]
            ),
            Reply(
                [
                    Text("Running them to see what fails."),
                    pause,
                    FunctionCall("run_shell_command", {"command": _TESTS, "description": "tests"}),
                ]
            ),
            Reply(
                [
                    Text("`test_add` fails: 2 + 3 gives -1. Where is `add`?"),
                    pause,
                    FunctionCall("grep_search", {"pattern": "def add"}),
                ]
            ),
            Reply(
                [
                    Text("`add` subtracts. Fixing it."),
                    pause,
                    FunctionCall(
                        "replace",
                        {
                            "file_path": "calc.py",
                            "instruction": "add must add",
                            "old_string": "return a - b",
                            "new_string": "return a + b",
                        },
                    ),
                ]
            ),
            Reply([FunctionCall("run_shell_command", {"command": _TESTS, "description": "tests"})]),
            Reply([FunctionCall("write_file", {"file_path": "SUMMARY.md", "content": _SUMMARY})]),
            Reply(
                [
                    Text("Fixed: `add` subtracted instead of adding. "),
                    pause,
                    Text("Both tests pass now, and SUMMARY.md says what changed."),
                ]
            ),
        ],
    )


def session_history(env: IsolatedGemini, session_id: str) -> list[Event] | None:
    """The demo's session loaded back from the file Gemini CLI wrote, as normalized events
    (``None`` if it cannot be found or read; the demo then shows where the files are)."""
    from gemwire.errors import SessionError
    from gemwire.sessions import GeminiHome, load_session

    try:
        info = GeminiHome(env.home).find(session_id, env.workspace)
        return list(load_session(info.path).events(cwd=str(env.workspace)))
    except SessionError:
        return None


def _disk_changes(workspace: Path, seeded: dict[str, str]) -> dict[str, str]:
    """Relative path -> ``created`` / ``modified`` / ``deleted``, read from the disk."""
    changes: dict[str, str] = {}
    for path in sorted(workspace.rglob("*")):
        if not path.is_file():
            continue
        name = path.relative_to(workspace).as_posix()
        if name not in seeded:
            changes[name] = "created"
        elif path.read_text(errors="replace") != seeded[name]:
            changes[name] = "modified"
    for name in seeded:
        if not (workspace / name).is_file():
            changes[name] = "deleted"
    return changes


def _show_changes(
    console: Console, workspace: Path, seeded: dict[str, str], changes: dict[str, str]
) -> None:
    from rich.padding import Padding

    from gemwire.cli import render

    console.print()
    console.print(f"What changed on disk, in {workspace}:", style="bold")
    for name, change in changes.items():
        before = seeded.get(name, "")
        after = (workspace / name).read_text(errors="replace") if change != "deleted" else ""
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "/dev/null" if change == "created" else f"a/{name}",
            "/dev/null" if change == "deleted" else f"b/{name}",
        )
        console.print(f"  {change} {name}")
        console.print(Padding(render.diff("".join(lines), limit=None), (0, 0, 0, 4)))


@click.command()
@click.option(
    "--executable",
    "gemini",
    help="The gemini to run (default: the pinned 0.61.0 of a source checkout, else yours).",
)
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="Make the workspace and Gemini home here and keep them (default: removed afterwards).",
)
@click.option("-v", "--verbose", is_flag=True, help="Show every line of tool output.")
def demo(gemini: str | None, root: Path | None, verbose: bool) -> None:
    """See gemwire run the real Gemini CLI, offline: it fixes a bug in a small project.

    A scripted model on 127.0.0.1 stands in for the Gemini API (no key, no network); the
    Gemini CLI, its tools and the files are real. Then gemwire checks the disk.
    """
    from rich.console import Console

    from gemwire import GeminiNotFound, GeminiOptions, UnsupportedVersion, find_gemini
    from gemwire.cli.gemini_run import show_gemini_run
    from gemwire.cli.live import open_output
    from gemwire.testing import CURRENT_VERSION, IsolatedGemini, ScriptedModel, pinned_gemini

    console = Console(highlight=False, soft_wrap=True)
    try:
        if gemini is None:
            try:
                gemini = str(pinned_gemini(CURRENT_VERSION))
            except GeminiNotFound:
                gemini = None  # an installed package, not a checkout: the user's own CLI
        found = find_gemini(gemini)
    except (GeminiNotFound, UnsupportedVersion) as exc:
        click.echo(f"gemwire: {exc}", err=True)
        sys.exit(EXIT_NOT_FOUND)
    scenario = demo_scenario()
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    with (
        ScriptedModel(scenario) as model,
        IsolatedGemini(model.url, files=scenario.files, root=root) as env,
    ):
        options = GeminiOptions(
            executable=found.path,
            cwd=str(env.workspace),
            env=env.environ(),
            inherit_env=False,  # the isolated home's environment, and nothing of the user's
            approval_mode="yolo",
            timeout=60,
        )
        cwd = str(env.workspace)
        console.print(
            f"gemwire demo: the real Gemini CLI {found.version or ''} fixes a bug; "
            "the model is scripted (offline, no API key)",
            style="bold",
        )
        console.print(f"  gemini     {found.path}", style="dim")
        console.print(f"  model      {model.url}", style="dim")
        console.print(f"  workspace  {cwd}, a small project whose tests fail\n", style="dim")
        output = open_output(verbose=verbose, cwd=cwd)
        result = show_gemini_run(DEMO_PROMPT, options, output)
        changes = _disk_changes(env.workspace, scenario.files)
        _show_changes(console, env.workspace, scenario.files, changes)
        claimed = {os.path.relpath(change.path, env.workspace) for change in result.files_changed}
        problems = [
            f"the agent reported {name} changed; it did not" for name in claimed - set(changes)
        ]
        problems += [
            f"{name} changed without a file_changed event" for name in set(changes) - claimed
        ]
        _show_history(env, result, verbose=verbose, console=console, kept_root=root is not None)
        for problem in problems:
            console.print(f"✗ {problem}", style="bold red")
        if result.ok and not problems:
            console.print(
                '\nNext: `gemwire doctor`, then `gemwire run "..."` in a project of yours.',
                style="dim",
            )
        if root is not None:
            console.print(f"Kept: {env.root}", style="dim")
    sys.exit(EXIT_OK if result.ok and not problems else EXIT_TURN_FAILED)


def _show_history(
    env: IsolatedGemini, result: RunResult, *, verbose: bool, console: Console, kept_root: bool
) -> None:
    from gemwire.cli.live import open_output

    if result.session_id is None:
        return
    history = session_history(env, result.session_id)
    console.print()
    if history is None:
        kept = "" if kept_root else " (removed with the rest; keep it all with --root DIR)"
        console.print(f"Gemini CLI's own record of this session{kept}:", style="dim")
        for path in env.session_files():
            console.print(f"  {path}", style="dim")
        return
    console.print("The same session, loaded back from Gemini CLI's own session file:", style="bold")
    output = open_output(verbose=verbose, cwd=str(env.workspace), timed=False)
    with output:
        for event in history:
            output.show(event)
        output.close()
