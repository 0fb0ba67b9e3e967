"""The version table (`REQUIREMENTS`) against the pinned Gemini CLIs: each one's ``--help``
lists a flag exactly when the table says its version has it, and every other flag gemwire
passes is in all of them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from gemwire import GeminiOptions
from gemwire.runners.discovery import GeminiExecutable, version_key
from gemwire.runners.gemini_checks import REQUIREMENTS
from gemwire.runners.gemini_options import build_argv
from gemwire.testing.pinned import PINNED_VERSIONS, pinned_gemini_command
from gemwire.wire.acp import McpServerStdio

pytestmark = [pytest.mark.e2e]

_OPTION = re.compile(r"^\s+(?:-\w, )?(--[\w-]+)\s+(.*)$")


def help_flags(version: str, home: Path) -> dict[str, str]:
    """Each flag ``gemini --help`` lists, with the rest of its line (its choices)."""
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(home), "GEMINI_CLI_HOME": str(home)}
    shown = subprocess.run(
        [*pinned_gemini_command(version), "--help"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {
        match[1]: match[2]
        for line in shown.stdout.splitlines()
        if (match := _OPTION.match(line)) is not None
    }


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_each_pinned_cli_has_what_the_table_says_it_has(version: str, tmp_path: Path) -> None:
    flags = help_flags(version, tmp_path)
    for requirement in REQUIREMENTS:
        if not requirement.needs.startswith("--"):
            continue  # a variable: docs/gemini-cli.md says where it is read
        flag, _, value = requirement.needs.partition(" ")
        has = flag in flags and (not value or f'"{value}"' in flags[flag])
        assert has == (version_key(version) >= version_key(requirement.since)), requirement


@pytest.mark.parametrize("version", PINNED_VERSIONS)
def test_every_other_flag_gemwire_passes_is_in_each_pinned_cli(
    version: str, tmp_path: Path
) -> None:
    everything = GeminiOptions(
        model="flash",
        approval_mode="yolo",
        sandbox=True,
        include_directories=("d",),
        policy_files=("p",),
        admin_policy_files=("a",),
        allowed_tools=("t",),
        extensions=("e",),
        resume="latest",
        skip_trust=True,
        allowed_mcp_server_names=("m",),
        worktree="w",
        raw_output=True,
        mcp_servers=(McpServerStdio(name="s", command="c"),),
    )
    executable = GeminiExecutable(path="gemini", version=version, source="explicit")
    passed = {arg for arg in build_argv(executable, everything) if arg.startswith("--")}
    in_the_table = {r.needs.split()[0] for r in REQUIREMENTS}
    in_the_table.add("--accept-raw-output-risk")  # goes with --raw-output
    assert passed - in_the_table <= set(help_flags(version, tmp_path))
