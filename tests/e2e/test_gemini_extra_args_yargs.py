"""``extra_args`` against the real parser: whatever gemwire passes on, each pinned Gemini CLI's
own ``parseArguments`` (yargs, with the CLI's options) reads without a prompt, an output format
other than gemwire's, or any other flag gemwire owns (tests/kit/gemini_spellings.py)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from kit.gemini_spellings import SAFE_GROUPS, owned_flags

from gemwire import GeminiOptions
from gemwire.runners._gemini_args import refusal
from gemwire.runners.discovery import GeminiExecutable
from gemwire.runners.gemini_options import build_argv
from gemwire.testing.pinned import PINNED_VERSIONS, pinned_gemini

pytestmark = [pytest.mark.e2e]

GEMINI = GeminiExecutable(path="gemini", version=None, source="explicit")
GEMWIRES_OWN = {"outputFormat": "stream-json"}
"""What the parser makes of gemwire's own arguments, with no extra ones."""


class Parser:
    """One pinned CLI's ``parseArguments`` in a node process (gemini_parser.mjs)."""

    def __init__(self, module: Path, log: Path) -> None:
        script = Path(__file__).with_name("gemini_parser.mjs")
        self._log = log.open("w")
        self._node = subprocess.Popen(
            ["node", str(script), str(module)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )

    def parse(self, args: list[str]) -> dict[str, object]:
        assert self._node.stdin is not None
        assert self._node.stdout is not None
        self._node.stdin.write(json.dumps(args) + "\n")
        self._node.stdin.flush()
        line = self._node.stdout.readline()
        assert line, f"the parser ended: {self._log.name}"
        parsed: dict[str, object] = json.loads(line)
        return parsed

    def close(self) -> None:
        assert self._node.stdin is not None
        assert self._node.stdout is not None
        self._node.stdin.close()
        self._node.wait(timeout=30)
        self._node.stdout.close()
        self._log.close()


def parser_module(version: str, scratch: Path) -> Path:
    """The module exporting the CLI's ``parseArguments``. 0.61.0 ships one bundle that does
    not export it: a copy of its chunk does, beside links to the rest."""
    package = next(
        folder
        for folder in pinned_gemini(version).resolve().parents
        if (folder / "package.json").is_file()
        and json.loads((folder / "package.json").read_text()).get("name") == "@google/gemini-cli"
    )
    for config in (package / "src/config/config.js", package / "dist/src/config/config.js"):
        if config.is_file():
            return config
    bundle = package / "bundle"
    chunks: list[str] = re.findall(
        r'import\("\./(gemini-\w+\.js)"\)', (bundle / "gemini.js").read_text()
    )
    [chunk] = chunks
    copy = scratch / "bundle"
    copy.mkdir()
    for entry in bundle.iterdir():
        if entry.name != chunk:
            (copy / entry.name).symlink_to(entry)
    text = (bundle / chunk).read_text()
    assert "\nasync function parseArguments(" in text
    (copy / chunk).write_text(text.replace("\nexport {\n", "\nexport {\n  parseArguments,\n", 1))
    return copy / chunk


@pytest.fixture(scope="module", params=PINNED_VERSIONS)
def parser(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Parser]:
    scratch = tmp_path_factory.mktemp(f"parser-{request.param}")
    running = Parser(parser_module(request.param, scratch), scratch / "stderr.log")
    yield running
    running.close()


TOKENS = st.one_of(
    owned_flags(),
    st.sampled_from([a for group in SAFE_GROUPS for a in group]),
    st.sampled_from(
        ["SMUGGLED", "-", "--", "---", "-5", "-.5", "--no-model", "--_", "--debug=\x00x"]
    ),
    st.text(alphabet="-_=.poqPQrsv5 ", max_size=8),
)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(args=st.lists(TOKENS, max_size=5))
@example(args=["--p=SMUGGLED"])
@example(args=["--query=SMUGGLED"])
@example(args=["--o=json"])
@example(args=["--prompt.x=1"])
@example(args=["--acp.x=1"])
@example(args=["--v"])
@example(args=["--_", "SMUGGLED"])
@example(args=["-5"])
@example(args=["--no-model", "SMUGGLED"])
@example(args=["--resume=abc"])
@example(args=["--model", "flash", "--policy", "p.toml", "--worktree", "wt", "-e", "x"])
def test_what_gemwire_passes_on_sets_nothing_gemwire_owns(parser: Parser, args: list[str]) -> None:
    refused = refusal(tuple(args))
    parsed = parser.parse(build_argv(GEMINI, GeminiOptions(extra_args=tuple(args)))[1:])
    if refused is None:
        # Passed on: the CLI either refuses it itself (exit 1, e.g. an unknown flag) or reads
        # nothing gemwire owns.
        assert parsed in ({"exit": 1}, GEMWIRES_OWN), args
    elif parsed not in ({"exit": 1}, GEMWIRES_OWN):
        return  # refused, and rightly: the parser read something gemwire owns
    # (Refused although harmless: gemwire's rules fold more spellings together than yargs.)


def test_the_parser_reads_gemwires_own_arguments(parser: Parser) -> None:
    assert parser.parse(build_argv(GEMINI, GeminiOptions())[1:]) == GEMWIRES_OWN
    # And it sees what the audit smuggled past the old rules.
    assert parser.parse(["--output-format", "stream-json", "--p=SMUGGLED"])["prompt"] == "SMUGGLED"
    assert parser.parse(["--output-format", "stream-json", "-5"])["prompt"] == "-5"
