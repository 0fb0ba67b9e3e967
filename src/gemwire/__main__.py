"""The ``gemwire`` command (and ``python -m gemwire``): the command line, or how to get it.

The command line needs the ``cli`` extra (click and rich). Installed without it, the
``gemwire`` script still exists, so it says what to install (exit 2) instead of failing
with a ``ModuleNotFoundError``.
"""

from __future__ import annotations

import re
import sys
from importlib.util import find_spec

__all__ = ("cli_requirements", "main")


def cli_requirements() -> list[str]:
    """The requirements of the ``cli`` extra, as installed package metadata declares them."""
    from importlib import metadata

    try:
        requires = metadata.requires("gemwire") or []
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return ["click", "rich"]
    return sorted(r.split(";")[0].strip() for r in requires if re.search(r"extra\s*==\s*.cli.", r))


def main() -> None:
    # Checked by module name, cheaply: the metadata is read only to say what is missing.
    if any(find_spec(name) is None for name in ("click", "rich")):
        # Not `pip install 'gemwire[cli]'`: gemwire may come from a wheel or a checkout.
        packages = " ".join(f"'{r}'" for r in cli_requirements())
        sys.stderr.write(
            f"gemwire: the command line needs the [cli] extra: pip install {packages}\n"
        )
        sys.exit(2)
    try:
        from gemwire.cli import main as cli

        cli()
    except KeyboardInterrupt:  # Ctrl-C while the command line loads: as later, no traceback
        sys.exit(130)


if __name__ == "__main__":
    main()
