"""``gemwire agent``: the SDK of the antigravity extra is imported by no other command."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from click.testing import CliRunner
from gemwire.cli import main
for args in (["--help"], ["agent", "--help"], ["agent", "antigravity", "--help"], ["doctor"]):
    CliRunner().invoke(main, args)
print(sorted(m for m in sys.modules if m.startswith(("google", "pydantic"))))
"""


def test_no_command_but_the_agent_imports_the_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
