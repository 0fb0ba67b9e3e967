"""``python -m gemwire.testing agent SCENARIO``: ACP on stdin and stdout (`serve_stdio`),
the answers to all a client wrote before closing its stdin, and its exit statuses."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, BinaryIO, NamedTuple

import anyio
import pytest

from gemwire.errors import ScenarioError
from gemwire.testing import (
    AgentScenario,
    AgentTurn,
    AwaitCancel,
    RequestPermission,
    Say,
    Step,
    Update,
    load_agent_scenario,
    serve_stdio,
)
from gemwire.testing.__main__ import main
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "terminal": True}}
PROMPT = {"sessionId": "s0", "prompt": [{"type": "text", "text": "hi"}]}
OPENING = (
    {"id": 0, "method": "initialize", "params": INITIALIZE},
    {"id": 1, "method": "session/new", "params": {"cwd": "/work", "mcpServers": []}},
    {"id": 2, "method": "session/prompt", "params": PROMPT},
)


def said(value: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": value}}


def write_all(to_agent: BinaryIO, *messages: dict[str, Any]) -> None:
    """The client's messages, a line each, then its stdin closed."""
    to_agent.writelines(
        json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n" for message in messages
    )
    to_agent.close()


class Pipes(NamedTuple):
    stdin: BinaryIO
    stdout: BinaryIO
    to_agent: BinaryIO
    from_agent: BinaryIO


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    """The agent's stdin and stdout, and the client's ends of them."""
    stdin, to_agent = os.pipe()
    from_agent, stdout = os.pipe()
    with (
        open(stdin, "rb", buffering=0) as agent_in,
        open(stdout, "wb") as agent_out,
        open(to_agent, "wb", buffering=0) as writer,
        open(from_agent, "rb") as reader,
    ):
        yield Pipes(agent_in, agent_out, writer, reader)


async def test_serve_stdio_answers_all_a_client_wrote_before_closing_its_stdin(
    pipes: Pipes,
) -> None:
    # No answer of the client's can come: the permission is not given, the cancel is taken.
    ask = RequestPermission(
        tool_call=acp.ToolCallUpdate(tool_call_id="w1"),
        options=[acp.PermissionOption(option_id="yes", name="Allow", kind="allow_once")],
        then={"yes": [Say(text="allowed")]},
    )
    steps: list[Step] = [Say(text="Hi."), ask, AwaitCancel(), Say(text="after")]
    write_all(pipes.to_agent, *OPENING)
    with anyio.fail_after(10):
        problems = await serve_stdio(
            AgentScenario(turns=[AgentTurn(steps=steps)]), pipes.stdin, pipes.stdout
        )
    pipes.stdout.close()
    written = await anyio.wrap_file(pipes.from_agent).read()
    got = [json.loads(line) for line in written.splitlines()]
    assert [m.get("id", m.get("method")) for m in got] == [
        0,
        1,
        "session/update",
        0,
        "session/update",
        2,
    ]
    assert got[2]["params"]["update"] == said("Hi.")
    assert got[3]["method"] == "session/request_permission"
    assert got[4]["params"]["update"] == said("after")
    assert got[5]["result"] == {"stopReason": "cancelled"}
    assert problems == []


def test_the_agent_program_exits_1_with_its_problems_on_stderr(
    pipes: Pipes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "agent.json"
    path.write_text('{"turns": [{"steps": [{"type": "say", "text": "Hi."}]}]}')
    write_all(pipes.to_agent, *OPENING, {"id": 3, "method": "session/prompt", "params": PROMPT})
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=pipes.stdin))
    monkeypatch.setattr(sys, "stdout", SimpleNamespace(buffer=pipes.stdout))
    assert main(["agent", str(path)]) == 1
    assert capsys.readouterr().err == "scripted agent: prompt 2 (session s0): no turn left\n"
    pipes.stdout.close()
    lines = pipes.from_agent.read().splitlines()
    # The two prompts are answered at once, in either order.
    ids = [json.loads(line).get("id") for line in lines]
    assert sorted(ids, key=str) == [0, 1, 2, 3, None]


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            {"turns": [{"steps": [{"type": "say"}]}]},
            "Object missing required field `text` - at `$.turns[0].steps[0]`",
        ),
        (
            {"turns": [{"steps": [{"type": "sing"}]}]},
            "Invalid value 'sing' - at `$.turns[0].steps[0].type`",
        ),
        (
            {"turns": [{"stopreason": "x"}]},
            "Object contains unknown field `stopreason` - at `$.turns[0]`",
        ),
        (
            {
                "turns": [
                    {
                        "steps": [
                            {
                                "type": "update",
                                "update": {"sessionUpdate": "plan", "entries": [], "x": 1},
                            }
                        ]
                    }
                ]
            },
            "plan has no field 'x' - at `$.turns[0].steps[0]`",
        ),
        (
            {
                "turns": [
                    {
                        "steps": [
                            {
                                "type": "update",
                                "update": {"sessionUpdate": "usage_update", "used": "1", "size": 2},
                            }
                        ]
                    }
                ]
            },
            "usage_update: Expected `int`, got `str` - at `$.used` - at `$.turns[0].steps[0]`",
        ),
        (
            {"turns": [{"steps": [{"type": "sleep", "seconds": -1}]}]},
            "Expected `float` >= 0.0 - at `$.turns[0].steps[0].seconds`",
        ),
    ],
)
def test_a_bad_scenario_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: object, message: str
) -> None:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(scenario))
    with pytest.raises(ScenarioError, match=r"^agent scenario: "):
        load_agent_scenario(json.dumps(scenario))
    assert main(["agent", str(path)]) == 2
    assert capsys.readouterr() == ("", f"error: {path}: {message}\n")


def test_an_unknown_update_kind_names_the_known_ones() -> None:
    with pytest.raises(
        ScenarioError,
        match=r"sessionUpdate 'no_such_update' is none of ACP's kinds \(user_message_chunk, ",
    ):
        Update(update={"sessionUpdate": "no_such_update"})
