"""`check_gemini_environment`: every check of what a headless Gemini CLI run here needs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gemwire.checks import gemini_rules
from gemwire.checks.check import Check
from gemwire.checks.install import gemini_cli, node

__all__ = ("check_gemini_environment",)


def check_gemini_environment(
    cwd: str | os.PathLike[str] | None = None,
    *,
    executable: str | None = None,
    gemini_home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Check]:
    """What will bite a headless Gemini CLI run in ``cwd``, in the order a person fixes
    things: the Gemini CLI found, Node.js, the Gemini home, auth, folder trust, session
    retention. One `Check` each, named ``"Gemini CLI"``, ``"Node.js"``, ``"Gemini home"``,
    ``"auth"``, ``"folder trust"`` and ``"session retention"``.

    Args:
        cwd: the workspace the runs would use; default here.
        executable: the ``gemini`` the runs would start; default: found as `find_gemini`
            finds it.
        gemini_home: the folder holding ``.gemini`` (``GeminiOptions.gemini_home``);
            default ``GEMINI_CLI_HOME`` from ``environ``, else the user's home.
        environ: the environment the runs would get; default ``os.environ``.

    Reads files and starts ``node --version``, nothing else; call it from synchronous
    code (or `anyio.to_thread.run_sync`). Secrets are never put in a `Check`.
    """
    where = Path(cwd or os.getcwd()).resolve()
    environ = os.environ if environ is None else environ
    if gemini_home is not None:
        home, source = Path(gemini_home), "explicit"
    elif environ.get("GEMINI_CLI_HOME"):
        home, source = Path(environ["GEMINI_CLI_HOME"]), "GEMINI_CLI_HOME"
    else:
        home, source = Path(os.path.expanduser("~")), "the user's home"
    cli, launcher = gemini_cli(executable, where)
    return [
        cli,
        node(launcher, environ),
        gemini_rules.gemini_home(home, source),
        gemini_rules.auth(home, where, environ),
        gemini_rules.trust(home, where, environ),
        gemini_rules.retention(home, where),
    ]
