"""What will bite a headless run here, checked from Python: the checks ``gemwire doctor`` shows.

A program that starts agents (a CI job, a batch driver) can run them first and stop with
the fix instead of a failed run::

    from gemwire import check_gemini_environment

    problems = [c for c in check_gemini_environment("path/to/project") if c.status == "fail"]
    for check in problems:
        print(f"{check.name}: {check.summary}\\n  fix: {check.fix}")

`check_gemini_environment` follows Gemini CLI 0.61.0's own rules for its executable,
Node.js, home, auth, folder trust and session cleanup; `check_agents` looks at the
built-in ACP agents. Each finding is a `Check`: ok, warn or fail, with the details and the
fix. They read files and start ``node --version``, nothing else, and never put a secret
in a `Check`: only the names of the variables and files one is in.
"""

from __future__ import annotations

from gemwire.checks.agents import check_agents
from gemwire.checks.check import Check, CheckStatus
from gemwire.checks.environment import check_gemini_environment

__all__ = ("Check", "CheckStatus", "check_agents", "check_gemini_environment")
