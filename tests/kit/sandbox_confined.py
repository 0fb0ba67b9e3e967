"""What a sandboxed attempt's hostile probe (`kit.sandbox_probe`) must have found, whichever
agent ran it: the checks the Gemini and the ACP sandbox tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BLOCKED = "blocked: "


def assert_confined(
    probes: dict[str, Any], *, name: str, out: Path, root: Path, etc: Path, home: Path
) -> None:
    """``probes`` (the attempt ``name``'s probes.json) show every try blocked; ``root`` is
    the test's folder (its ``hidden`` tests, its ``outside.txt``), ``etc`` the file tried
    in /etc, ``home`` the host's home."""
    assert all(got.startswith(BLOCKED) for got in probes["read"].values()), probes["read"]
    # Of the output folder, only the way to its own workspace is there.
    listed = {str(out / "workspaces"): f"got: ['{name}']", str(root / "hidden"): "got: []"}
    assert probes["list"] == listed
    assert probes["write"][str(etc)].startswith(BLOCKED)
    # /tmp is the attempt's own: the write lands there, never on the host's.
    assert probes["write"][str(root / "outside.txt")] == "got: wrote"
    assert probes["symlink_write"].startswith(BLOCKED)
    assert probes["plant"] == "got: planted"
    assert probes["connect"] == "blocked: ConnectionRefusedError"
    assert probes["resolve"] == "blocked: gaierror"
    assert probes["model"] == "got: http 404"
    assert probes["home"] != str(home)
    assert probes["memory"] == "blocked: MemoryError"
    assert probes["daemon"].startswith("got: ")
