"""The saved-vs-live check every agent's saved sessions go through
(tests/e2e/agents/test_<agent>_saved_sessions.py).

A case of test_agents_offline.py runs live over ACP through the real pinned agent; the
session it saved is then loaded, recorded into tests/fixtures/<agent>/<version>
(``GEMWIRE_RECORD=1``, with its golden events, machine paths replaced) and compared with
the live events: the answer, the tool calls and their kinds, how each finished, the files
changed. Where an agent's saved session and live stream differ by design, the one table of
tests/kit/saved_differences.py lists the case and what differs, with why (docs/sessions.md
links it); the rest is compared.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    ToolCallFinished,
    ToolCallStarted,
    UserMessage,
)
from gemwire.runners.acp import AcpClient
from gemwire.runners.agents import AgentName
from gemwire.sessions import SessionSource, load_session
from gemwire.testing import Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent
from gemwire.testing.recorder import MachinePaths
from kit.saved_differences import DIFFERENCES

if TYPE_CHECKING:
    from kit.shared_agents import AgentPool

__all__ = (
    "CASES",
    "JSONL",
    "PROMPTS",
    "Recording",
    "check_multi_turn",
    "check_saved",
    "check_saved_shared",
    "summary",
)

MACHINE = MachinePaths()


def _offline() -> Any:
    path = Path(__file__).parents[1] / "e2e" / "agents" / "test_agents_offline.py"
    spec = importlib.util.spec_from_file_location("saved_sessions_cases", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


OFFLINE = _offline()
CASES = list(OFFLINE.PERMISSIONS)


def scrub(text: str, root: Path) -> str:
    """A recording's text with its machine paths replaced by placeholders (tests/fixtures)."""
    own = [
        (str(root / "workspace"), "__WORKSPACE__"),
        (str(root / "home"), "__HOME__"),
        (str(root), "__ROOT__"),
    ]
    # The same without the leading slash (OpenCode's ``path`` column and its tools' titles).
    own += [(path.lstrip("/"), name) for path, name in own]
    # Codex's context names the workspace in XML (`<root>…</root>`): a closing tag is kept
    # from being read as a path (the user's home, when it is /root).
    own.append(("</", "<\0"))
    return MACHINE.scrub(text, lambda name: f"__{name.upper()}__", own).replace("<\0", "</")


def summary(events: list[Event]) -> dict[str, Any]:
    return {
        "answer": "".join(e.text for e in events if isinstance(e, MessageDelta)),
        "calls": [(e.call_id, e.kind) for e in events if isinstance(e, ToolCallStarted)],
        "finished": [(e.call_id, e.status) for e in events if isinstance(e, ToolCallFinished)],
        "files": sorted({e.path for e in events if isinstance(e, FileChanged)}),
    }


@dataclass(frozen=True)
class Recording:
    """How an agent's saved session is kept in tests/fixtures: as text (``suffix``), and
    back (``session``: the recording as a session file, made in a scratch folder)."""

    suffix: str
    text: Callable[[Path], str]
    session: Callable[[Path, Path], Path]


JSONL = Recording(".jsonl", Path.read_text, lambda recorded, _: recorded)
"""A session file of JSON lines, kept as it is."""


def _record(path: Path, root: Path, recorded: Path, recording: Recording) -> None:
    """The session at ``path`` kept as ``recorded``, with its golden events beside it."""
    recorded.parent.mkdir(parents=True, exist_ok=True)
    recorded.write_text(scrub(recording.text(path), root))
    session = recording.session(recorded, root / "recorded")
    events = [msgspec.to_builtins(event) for event in load_session(session).events()]
    recorded.with_suffix(".events.jsonl").write_text(
        "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)
    )


def record_gemini_session(path: Path, root: Path, folder: Path) -> None:
    """A session file of Gemini CLI's kept in ``folder`` (emptied first), its project hash
    a placeholder too, with its golden events beside it."""
    workspace = str(root / "workspace")
    text = path.read_text().replace(
        hashlib.sha256(workspace.encode()).hexdigest(), "__PROJECT_HASH__"
    )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    recorded = folder / path.name
    recorded.write_text(scrub(text, root))
    events = [msgspec.to_builtins(e) for e in load_session(recorded).events()]
    recorded.with_suffix(".events.jsonl").write_text(
        "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)
    )


def _real(folder: Path) -> Path:
    """``folder`` as the agents report it (symlinks resolved)."""
    return folder.resolve()


SAVED_AT_EXIT = {
    ("qwen", "cancel"): "Qwen Code saves a cancelled turn's streamed text only later: on a "
    "process that goes on, the session read after the turn's end has no answer (or no "
    "message at all), where its process's exit leaves the text saved",
}
"""Cases whose session is complete only once the agent's process ends: each runs on a
process of its own, stopped before its session is read."""


def check_saved_shared(
    pool: AgentPool,
    agent: AgentName,
    case: str,
    tmp_path: Path,
    *,
    saved_at: str,
    home: Callable[[Path], SessionSource],
    recordings: Path,
    recording: Recording = JSONL,
) -> None:
    """`check_saved`, with the case run on the module's shared agent (``pool``, in
    tests/kit/shared_agents.py): its session is the one of its id under the shared home,
    the one ``home`` lists for the case's own workspace. Recording, the case runs on an
    agent of its own (`check_saved`): a recording is of a home that holds nothing else;
    so do the cases of `SAVED_AT_EXIT`."""
    if OFFLINE.RECORD or (agent, case) in SAVED_AT_EXIT:
        anyio.run(
            partial(
                check_saved,
                saved_at=saved_at,
                home=home,
                recordings=recordings,
                recording=recording,
            ),
            agent,
            case,
            tmp_path,
        )
        return
    root = _real(tmp_path)
    shared = pool.get(agent, OFFLINE.PERMISSIONS[case], OFFLINE.GOLDEN_VERSIONS.get(agent))
    live, _, _ = OFFLINE.run_shared_case(shared, OFFLINE.TOOLS[agent], case, root)
    _check(
        live,
        root,
        case,
        saved_at,
        home,
        recordings / f"{case}{recording.suffix}",
        recording,
        DIFFERENCES[agent].get(case, {}),
        home_dir=shared.env.home,
        session_id=live[0].session_id,
    )


async def check_saved(
    agent: str,
    case: str,
    tmp_path: Path,
    *,
    saved_at: str,
    home: Callable[[Path], SessionSource],
    recordings: Path,
    recording: Recording = JSONL,
) -> None:
    """Run ``case`` live through ``agent``; its one session file (``saved_at``, a glob under
    the isolated home) must be what ``home`` lists first, and agree with the live run."""
    root = _real(tmp_path)
    live, _, _, _ = await OFFLINE.run_case(agent, case, root)
    _check(
        live,
        root,
        case,
        saved_at,
        home,
        recordings / f"{case}{recording.suffix}",
        recording,
        DIFFERENCES[agent].get(case, {}),
    )


PROMPTS = ("go", "and again")
"""The prompts of the multi-turn case, one after the other on one session."""


async def check_multi_turn(
    agent: AgentName,
    tmp_path: Path,
    *,
    saved_at: str,
    home: Callable[[Path], SessionSource],
    recordings: Path,
    recording: Recording = JSONL,
) -> None:
    """Two prompts on one session, live through ``agent`` (an answer; then a shell command
    and an answer): its session (``multi_turn``) holds both turns, and agrees with them."""
    root = _real(tmp_path)
    workspace = root / "workspace"
    shell = OFFLINE.TOOLS[agent].shell(workspace)
    script = Scenario(
        turns=[
            Reply([Text("First answer.")]),
            Reply([Text("On it."), shell]),
            Reply([Text("Done.")]),
        ],
        files=OFFLINE.SEED,
    )
    live: list[Event] = []
    with ScriptedModel(script) as model:
        # The releases these saved-session tests were written for (claude-code-acp 0.16.2,
        # codex-acp 0.16.0 with Codex 0.137).
        older = {"claude": "0.16.2", "codex": "0.16.0"}.get(agent)
        env = isolated_agent(agent, model, files=script.files, root=root, version=older)
        with anyio.fail_after(240):
            async with AcpClient(env.acp_options(permissions="all")) as client:
                session = await client.new_session()
                for prompt in PROMPTS:
                    async with session.prompt(prompt) as turn:
                        live += [event async for event in turn]
                    assert turn.result.ok, turn.result
        assert env.live_processes() == []
    assert model.problems == []
    case = "multi_turn"
    saved = _check(
        live,
        root,
        case,
        saved_at,
        home,
        recordings / f"{case}{recording.suffix}",
        recording,
        DIFFERENCES[agent].get(case, {}),
    )
    assert [e.text for e in saved if isinstance(e, UserMessage)] == list(PROMPTS)


def _check(
    live: list[Event],
    root: Path,
    case: str,
    saved_at: str,
    home: Callable[[Path], SessionSource],
    recorded: Path,
    recording: Recording,
    differ: dict[str, str],
    *,
    home_dir: Path | None = None,
    session_id: str | None = None,
) -> list[Event]:
    """The session saved under ``root`` (or the one of ``session_id`` in ``home_dir``, a
    shared agent's) agrees with ``live`` but for what ``differ`` names; kept as
    ``recorded`` when recording. Its events."""
    home_dir = home_dir or root / "home"
    path = _saved(home_dir, saved_at, session_id)
    loaded = load_session(path)
    saved = list(loaded.events())
    listed = home(home_dir).sessions(root / "workspace")[0].path
    assert listed in (str(path), f"{path}#{loaded.session_id}")  # a file, or a database's
    if OFFLINE.RECORD:
        _record(path, root, recorded, recording)
    ours, theirs = summary(saved), summary(live)
    assert {k: v for k, v in ours.items() if k not in differ} == {
        k: v for k, v in theirs.items() if k not in differ
    }
    assert all(ours[k] != theirs[k] for k in differ), (
        "listed as differing, but agrees",
        ours,
        theirs,
    )
    return saved


def _saved(home_dir: Path, saved_at: str, session_id: str | None) -> Path:
    """The session file a run saved under ``home_dir`` (``saved_at``, a glob): the one there
    is, or the one of ``session_id`` in a home many sessions share: named by its id, or
    the database that holds it (``<database>#<session id>``, OpenCode's)."""
    found = list(home_dir.glob(saved_at))
    if session_id is None:
        [path] = found
        return path
    [path] = [p for p in found if session_id in p.name] or found
    return path if session_id in path.name else Path(f"{path}#{session_id}")
