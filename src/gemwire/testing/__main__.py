"""``python -m gemwire.testing``: record fixtures, run a case against the real CLI, serve a
scenario to a shell, or be a scripted ACP agent.

python -m gemwire.testing record tests/fixtures/cases/*.json --out tests/fixtures/gemini
python -m gemwire.testing run examples/fix_the_bug.json
eval "$(python -m gemwire.testing serve examples/done.json &)"
gemwire acp "hi" -- python -m gemwire.testing agent agent.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import anyio

from gemwire.errors import GemwireError
from gemwire.testing.agent_scenario import load_agent_scenario
from gemwire.testing.pinned import CURRENT_VERSION, PINNED_VERSIONS
from gemwire.testing.recorder import load_case, load_cases, record_case, run_case
from gemwire.testing.scripted_agent import serve_stdio
from gemwire.testing.serve import serve


def _record(args: argparse.Namespace) -> int:
    cases = load_cases(args.cases)
    for name, case in cases.items():
        for folder in record_case(name, case, args.out, versions=args.version):
            print(f"recorded {folder}")
    return 0


def _run(args: argparse.Namespace) -> int:
    case = load_case(args.case)
    with tempfile.TemporaryDirectory(prefix="gemwire-run-") as tmp:
        result = anyio.run(run_case, case, args.version, args.format, Path(tmp))
        for argv, output in zip(result.argvs, result.outputs, strict=True):
            print(f"$ {' '.join(argv)}   (prompt on stdin)")
            sys.stdout.write(output.stdout.decode(errors="replace"))
            print(
                f"-> exit code {output.returncode}" + (" (timed out)" if output.timed_out else "")
            )
        print("\nworkspace afterwards:")
        seeded = case.scenario.files
        for path in sorted(result.env.workspace.rglob("*")):
            if path.is_file():
                name = path.relative_to(result.env.workspace).as_posix()
                if name not in seeded:
                    change = "created"
                elif path.read_text(errors="replace") != seeded[name]:
                    change = "modified"
                else:
                    change = "unchanged"
                print(f"  {change:<9}  {name}")
        for problem in result.problems:
            print(f"scripted model: {problem}", file=sys.stderr)
    return 1 if result.problems else 0


def _agent(args: argparse.Namespace) -> int:
    # Read first: a bad scenario is one line on stderr before any client is answered.
    scenario = load_agent_scenario(args.scenario)
    problems = anyio.run(serve_stdio, scenario, sys.stdin.buffer, sys.stdout.buffer)
    for problem in problems:
        print(f"scripted agent: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gemwire.testing",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    record = commands.add_parser("record", help="record fixtures from the pinned real CLIs")
    record.add_argument("cases", nargs="+", type=Path, help="case files (JSON)")
    record.add_argument("--out", type=Path, default=Path("tests/fixtures/gemini"))
    record.add_argument(
        "--version",
        action="append",
        choices=PINNED_VERSIONS,
        help="record only this CLI version (repeatable); default: the case's",
    )
    record.set_defaults(handler=_record)

    run = commands.add_parser("run", help="run a case against a pinned real CLI and show it")
    run.add_argument("case", type=Path)
    run.add_argument("--version", choices=PINNED_VERSIONS, default=CURRENT_VERSION)
    run.add_argument("--format", choices=["stream-json", "json"], default="stream-json")
    run.set_defaults(handler=_run)

    served = commands.add_parser(
        "serve",
        help="serve a scenario until Ctrl-C, printing the export lines that point a shell at it",
    )
    served.add_argument("scenario", type=Path, help="scenario file (JSON)")
    served.set_defaults(handler=lambda args: serve(args.scenario, sys.stdout))

    agent = commands.add_parser(
        "agent",
        help="be an ACP agent on stdin/stdout that plays an agent scenario (docs/testing.md)",
    )
    agent.add_argument("scenario", type=Path, help="agent scenario file (JSON)")
    agent.set_defaults(handler=_agent)

    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except GemwireError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
