"""Record what a real, pinned Gemini CLI does with a scenario: the fixture corpus.

A *case* is a scenario plus the CLI runs to make against it (several runs share one home
and workspace, e.g. a run and then its ``--resume``). Recording a case runs it once per
output format, each time from a fresh home, and stores byte-exact:

    <out>/<version>/<case>/
      meta.json                     CLI version, argv, exit codes, scenario, settings,
                                    a summary of every request the model received
      <format>/run-<n>.stdout       stdout of run n (stream-json or json output)
      <format>/run-<n>.stderr
      <format>/gemini-home/...      the home's .gemini/projects.json, tmp/ and history/:
                                    session files exactly as the CLI wrote them

Machine-specific strings are replaced by placeholders, everywhere including file names
(see `PLACEHOLDERS`); nothing else is changed. `MachinePaths` does the part every recording
shares with the other agents' (tests/e2e/agents): this checkout, the pinned agents, the
user's home and the temporary folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import msgspec

from gemwire.errors import ScenarioError
from gemwire.runners.agents import clis_dir
from gemwire.runners.process import ProcessOutput, run_process
from gemwire.testing.environment import IsolatedGemini
from gemwire.testing.model_server import RecordedRequest, ScriptedModel
from gemwire.testing.pinned import (
    CURRENT_VERSION,
    PINNED_VERSIONS,
    pinned_gemini,
    pinned_gemini_command,
)
from gemwire.testing.scenario import Scenario

__all__ = (
    "PLACEHOLDERS",
    "CliRun",
    "MachinePaths",
    "RecordingCase",
    "load_case",
    "load_cases",
    "record_case",
    "run_case",
)

OutputFormat = Literal["stream-json", "json"]

PLACEHOLDERS = {
    "workspace": "__WORKSPACE__",
    "home": "__HOME__",
    "root": "__ROOT__",
    "project_hash": "__PROJECT_HASH__",
    "model_url": "__MODEL_URL__",
    "cli_dir": "__CLI_DIR__",
    "clis": "__CLIS__",
    "checkout": "__CHECKOUT__",
    "user_home": "__USER_HOME__",
    "tmp": "__TMP__",
}
"""What replaces each machine-specific string in recordings."""

# A path starts after none of the characters a path name holds (``.gemini/tmp`` is no /tmp).
_PATH_START = r"(?<![\w.~-])"
_PATH_END = r"(?![\w.~-])"


class MachinePaths:
    """The paths of this machine that a recording may hold besides its run's own folders:
    this checkout, the pinned agents' folder, the user's home, the temporary folder.

    An agent names its own files by their real path: where the pinned agents are linked
    (a git worktree's ``clis/*/node_modules``), that path becomes the link's first.

        >>> paths = MachinePaths()
        >>> paths.scrub(f"{paths.home}/.gemini/tmp/x", lambda name: f"{{{name}}}")
        '{user_home}/.gemini/tmp/x'
    """

    def __init__(self) -> None:
        clis = clis_dir()
        self.home = str(Path.home())
        self._links = [
            (str(link.resolve()), str(link))
            for link in sorted(clis.glob("*/node_modules"))
            if link.is_symlink()
        ]
        named = {
            tempfile.gettempdir(): "tmp",
            self.home: "user_home",
            str(Path(__file__).resolve().parents[3]): "checkout",
            str(clis): "clis",
            str(clis.resolve()): "clis",
        }
        # Longest first: the checkout may be in the home, the agents are in the checkout.
        self._named = [
            (re.compile(_PATH_START + re.escape(path) + _PATH_END), name)
            for path, name in sorted(named.items(), key=lambda item: -len(item[0]))
            if len(Path(path).parts) > 1  # never "/" itself
        ]

    def scrub(
        self,
        text: str,
        placeholder: Callable[[str], str],
        run: Sequence[tuple[str, str]] = (),
    ) -> str:
        """``text`` with the run's own strings replaced as ``run`` says (in order), then
        this machine's paths by ``placeholder(name)``."""
        for real, link in self._links:
            text = text.replace(real, link)
        for old, new in run:
            text = text.replace(old, new)
        for pattern, name in self._named:
            text = pattern.sub(placeholder(name), text)
        return text


class CliRun(msgspec.Struct, frozen=True, kw_only=True):
    """One invocation of the CLI: the prompt goes to stdin, ``args`` after ``-o <format>``."""

    prompt: str
    args: list[str] = []


class RecordingCase(msgspec.Struct, frozen=True, kw_only=True):
    """A scenario and the runs to record against it."""

    scenario: Scenario
    runs: list[CliRun]
    description: str = ""
    settings: dict[str, Any] = {}
    """Merged into the isolated home's settings.json (e.g. lower ``general.maxAttempts``)."""
    env: dict[str, str] = {}
    """Added to every run's environment (e.g. ``GEMINI_CLI_EXP_AGENT=true``)."""
    versions: list[str] = msgspec.field(default_factory=lambda: [CURRENT_VERSION])
    formats: list[OutputFormat] = msgspec.field(default_factory=lambda: ["stream-json", "json"])
    timeout: float = 120.0
    """Seconds per run before the CLI's process group is stopped."""

    def __post_init__(self) -> None:
        if not self.runs:
            raise ScenarioError("a case needs at least one run")
        unknown = sorted(set(self.versions) - set(PINNED_VERSIONS))
        if unknown:
            raise ScenarioError(
                f"versions {unknown} are not pinned (pinned: {', '.join(PINNED_VERSIONS)})"
            )


_case_decoder = msgspec.json.Decoder(RecordingCase)


def load_case(path: Path) -> RecordingCase:
    """Read a case file; errors name the file and the JSON path of the problem."""
    try:
        return _case_decoder.decode(path.read_bytes())
    except OSError as exc:
        raise ScenarioError(f"cannot read: {exc.strerror}", source=str(path)) from exc
    except msgspec.DecodeError as exc:
        raise ScenarioError(str(exc), source=str(path)) from exc


class RunRecord(msgspec.Struct, frozen=True, kw_only=True):
    argv: list[str]
    exit_code: int
    timed_out: bool
    prompt: str


class CaseRun(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of running a case once in one output format (paths not yet scrubbed)."""

    env: IsolatedGemini
    model_url: str
    outputs: list[ProcessOutput]
    argvs: list[list[str]]
    requests: list[RecordedRequest]
    problems: list[str]


async def run_case(
    case: RecordingCase, version: str, output_format: OutputFormat, root: Path
) -> CaseRun:
    """Run every CLI run of ``case`` against a fresh scripted model, under ``root``."""
    gemini = pinned_gemini_command(version)
    outputs: list[ProcessOutput] = []
    argvs: list[list[str]] = []
    with ScriptedModel(case.scenario) as model:
        env = IsolatedGemini(
            model.url,
            files=case.scenario.files,
            settings=case.settings,
            root=root,
            version=version,
        )
        for run in case.runs:
            argv = [*gemini, "-o", output_format, *run.args]
            argvs.append(["gemini", *argv[len(gemini) :]])
            outputs.append(
                await run_process(
                    argv,
                    input=run.prompt.encode(),
                    cwd=env.workspace,
                    env=env.environ(case.env),
                    timeout=case.timeout,
                )
            )
    return CaseRun(
        env=env,
        model_url=model.url,
        outputs=outputs,
        argvs=argvs,
        requests=model.requests,
        problems=model.problems,
    )


class _Scrubber:
    """Replaces the machine-specific strings of one run with placeholders."""

    def __init__(self, env: IsolatedGemini, model_url: str, cli_dir: Path) -> None:
        workspace = str(env.workspace)
        self._machine = MachinePaths()
        # Longest first: the workspace and home live under the root.
        self.replacements = [
            (model_url, PLACEHOLDERS["model_url"]),
            # Node stack traces name the CLI's own files.
            (str(cli_dir), PLACEHOLDERS["cli_dir"]),
            (hashlib.sha256(workspace.encode()).hexdigest(), PLACEHOLDERS["project_hash"]),
            (workspace, PLACEHOLDERS["workspace"]),
            (str(env.home), PLACEHOLDERS["home"]),
            (str(env.root), PLACEHOLDERS["root"]),
        ]

    def text(self, text: str) -> str:
        return self._machine.scrub(text, PLACEHOLDERS.__getitem__, self.replacements)

    def data(self, data: bytes) -> bytes:
        # Byte-exact: bytes that are not UTF-8 go through unchanged.
        text = data.decode(errors="surrogateescape")
        return self.text(text).encode(errors="surrogateescape")


def _summarize(request: RecordedRequest) -> dict[str, Any]:
    summary: dict[str, Any] = {"rpc": request.rpc, "model": request.model}
    if request.turn is not None:
        summary["turn"] = request.turn
    if request.rpc == "streamGenerateContent":
        summary["declared_tools"] = request.function_declarations()
        summary["function_responses"] = [r.get("name") for r in request.function_responses()]
    return summary


def _copy_home(env: IsolatedGemini, dest: Path, scrub: _Scrubber) -> None:
    """Copy the session-relevant part of the home's ``.gemini`` with placeholders applied."""
    gemini_dir = env.gemini_dir
    sources = [gemini_dir / "projects.json", *(gemini_dir / d for d in ("tmp", "history"))]
    for source in sources:
        files = [source] if source.is_file() else sorted(source.rglob("*"))
        for path in files:
            if not path.is_file():
                continue
            target = dest / scrub.text(str(path.relative_to(gemini_dir)))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(scrub.data(path.read_bytes()))


def record_case(
    name: str,
    case: RecordingCase,
    out: Path,
    *,
    versions: Sequence[str] | None = None,
) -> list[Path]:
    """Record ``case`` for each of its versions (or ``versions``); returns the folders written."""
    written: list[Path] = []
    for version in versions or case.versions:
        # <clis>/gemini-<version>/node_modules/.bin/gemini -> <clis>/gemini-<version>
        cli_dir = pinned_gemini(version).parents[2].resolve()
        folder = out / version / name
        shutil.rmtree(folder, ignore_errors=True)
        meta: dict[str, Any] = {
            "cli_version": version,
            "case": name,
            "description": case.description,
            "placeholders": PLACEHOLDERS,
            "settings": case.settings,
            "scenario": msgspec.to_builtins(case.scenario),
            "formats": {},
        }
        if case.env:
            meta["env"] = case.env
        for output_format in case.formats:
            with tempfile.TemporaryDirectory(prefix="gemwire-rec-") as tmp:
                result = anyio.run(run_case, case, version, output_format, Path(tmp))
                scrub = _Scrubber(result.env, result.model_url, cli_dir)
                fmt_dir = folder / output_format
                fmt_dir.mkdir(parents=True)
                for n, output in enumerate(result.outputs, start=1):
                    (fmt_dir / f"run-{n}.stdout").write_bytes(scrub.data(output.stdout))
                    (fmt_dir / f"run-{n}.stderr").write_bytes(scrub.data(output.stderr))
                _copy_home(result.env, fmt_dir / "gemini-home", scrub)
                meta["formats"][output_format] = {
                    "runs": [
                        msgspec.to_builtins(
                            RunRecord(
                                argv=argv,
                                exit_code=o.returncode,
                                timed_out=o.timed_out,
                                prompt=run.prompt,
                            )
                        )
                        for argv, o, run in zip(
                            result.argvs, result.outputs, case.runs, strict=True
                        )
                    ],
                    "requests": [_summarize(r) for r in result.requests],
                    "model_problems": result.problems,
                }
        (folder / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        written.append(folder)
    return written


def load_cases(paths: Sequence[Path]) -> Mapping[str, RecordingCase]:
    """Cases by name (the file's stem), in the order given."""
    return {path.stem: load_case(path) for path in paths}
