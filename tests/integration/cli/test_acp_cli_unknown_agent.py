"""`gemwire acp` and an agent gemwire does not know the modes of (the scripted agent as a
program, saying it is ``my-agent``): refused under ``--permissions deny`` with exit 2 and
the reason, run under ``--mode`` as the user chose."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from gemwire.cli import main
from gemwire.cli.exit_codes import EXIT_OK, EXIT_USAGE

SCENARIO = {
    "agentInfo": {"name": "my-agent", "version": "1.0"},
    "modes": {"currentModeId": "yolo", "availableModes": [{"id": "default"}, {"id": "yolo"}]},
    "turns": [{"steps": [{"type": "say", "text": "Done."}]}],
}


def test_refused_with_exit_2_saying_why_and_run_under_mode(tmp_path: Path) -> None:
    scenario = tmp_path / "agent.json"
    scenario.write_text(json.dumps(SCENARIO))
    agent = [sys.executable, "-m", "gemwire.testing", "agent", str(scenario)]
    base = ["acp", "--json", "--cwd", str(tmp_path), "--permissions", "deny"]

    refused = CliRunner().invoke(main, [*base, "hi", "--", *agent])
    assert refused.exit_code == EXIT_USAGE, refused.output
    assert refused.stdout == ""  # no turn began: no events
    assert refused.stderr.splitlines()[-1] == (
        "Error: acp:my-agent is not an agent gemwire knows the modes of, so it cannot make "
        "sure the agent asks before acting (a permission preset answers only what an agent "
        "asks): pass --mode (AcpOptions.mode) with the one of its modes (default, yolo) you "
        "choose to run it in, or --permissions all to allow everything"
    )

    chosen = CliRunner().invoke(main, [*base, "--mode", "default", "hi", "--", *agent])
    assert chosen.exit_code == EXIT_OK, chosen.output
    [*_, last] = chosen.stdout.splitlines()
    completed = json.loads(last)
    assert (completed["type"], completed["ok"], completed["answer"]) == (
        "turn_completed",
        True,
        "Done.",
    )
