"""`gemwire acp --connect URL`: a remote agent (gemwire's endpoint serving the scripted
agent, served as `gemwire serve` serves it on 127.0.0.1) driven as a local one is, over either transport."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from kit.served import ScriptedChannel, endpoint_app, serve_asgi

from gemwire.cli import main
from gemwire.cli.exit_codes import EXIT_AUTH, EXIT_NOT_FOUND, EXIT_USAGE
from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import ScriptedAgent


async def _answer(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    await agent.say(session_id, "Hello ")
    await agent.say(session_id, "from afar.")
    return "end_turn"


TOKEN = "s3cret-t0ken"


def with_token(app: Any) -> Any:
    """``app`` behind a bearer token, as `gemwire serve` has it (401 without)."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
                if scope["type"] == "websocket":
                    await receive()  # websocket.connect
                    answer = {"type": "websocket.http.response.start", "status": 401}
                    await send({**answer, "headers": []})
                    body = {"type": "websocket.http.response.body", "body": b"no"}
                    await send(body)
                    return
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b'{"error": "no"}'})
                return
        await app(scope, receive, send)

    return guarded


@pytest.fixture(scope="module")
def host() -> Iterator[str]:
    endpoint = AcpEndpoint(lambda name: ScriptedChannel(on_prompt=_answer))
    with serve_asgi(endpoint_app(endpoint)) as host:
        yield host


@pytest.fixture(scope="module")
def guarded_host() -> Iterator[str]:
    endpoint = AcpEndpoint(lambda name: ScriptedChannel(on_prompt=_answer))
    with serve_asgi(with_token(endpoint_app(endpoint))) as host:
        yield host


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_the_json_events_of_a_remote_turn(host: str, scheme: str) -> None:
    url = f"{scheme}://{host}/acp/scripted"
    result = CliRunner().invoke(main, ["acp", "--json", "--connect", url, "say hello"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(e["type"], e.get("text") or e.get("answer")) for e in events] == [
        ("session_started", None),
        ("user_message", "say hello"),
        ("message_delta", "Hello "),
        ("message_delta", "from afar."),
        ("turn_completed", "Hello from afar."),
    ]
    assert {e["agent"] for e in events} == {"acp:scripted"}
    assert events[-1]["stop_reason"] == "end_turn"


def test_a_refused_token_says_so_and_exits_with_the_auth_status() -> None:
    async def refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b'{"error": "no"}'})

    with serve_asgi(refuse) as where:
        url = f"http://{where}/acp/gemini"
        result = CliRunner().invoke(main, ["acp", "--connect", url, "--token", "bad", "hi"])
    assert result.exit_code == EXIT_AUTH
    assert result.stderr == f"gemwire: the ACP endpoint {url} refused the token (HTTP 401): no\n"


def test_an_endpoint_nobody_listens_on_is_not_found(host: str) -> None:
    with serve_asgi(endpoint_app(AcpEndpoint())) as where:
        pass  # the port is free again
    url = f"ws://{where}/acp/gemini"
    result = CliRunner().invoke(main, ["acp", "--connect", url, "hi"])
    assert result.exit_code == EXIT_NOT_FOUND
    assert result.stderr.startswith(f"gemwire: cannot reach the ACP endpoint {url}: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "gemini"], "give --connect, --agent or COMMAND: one of them"),
        (["--", "gemini", "--acp"], "give --connect, --agent or COMMAND: one of them"),
    ],
)
def test_connect_is_instead_of_a_command(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["acp", "--connect", "ws://h/acp/gemini", "hi", *args])
    assert result.exit_code == EXIT_USAGE
    assert message in result.stderr


def test_an_endpoint_url_is_ws_or_http() -> None:
    result = CliRunner().invoke(main, ["acp", "--connect", "ftp://h/acp/gemini?token=x", "hi"])
    assert result.exit_code == EXIT_USAGE
    assert (
        "an ACP endpoint is ws://, wss://, http:// or https://, not 'ftp://h/acp/gemini'"
        in result.stderr
    )


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_the_token_may_come_in_the_url_as_run_server_takes_it(
    guarded_host: str, scheme: str
) -> None:
    # It was sent as part of the URL, which the endpoint does not read: refused (exit 5).
    url = f"{scheme}://{guarded_host}/acp/scripted?token={TOKEN}"
    result = CliRunner().invoke(main, ["acp", "--json", "--connect", url, "say hello"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["answer"] == "Hello from afar."
    assert {e["agent"] for e in events} == {"acp:scripted"}
    assert TOKEN not in result.output


def test_a_wrong_token_in_the_url_is_refused_without_showing_it(guarded_host: str) -> None:
    url = f"http://{guarded_host}/acp/scripted?token=wrong-one"
    result = CliRunner().invoke(main, ["acp", "--connect", url, "hi"])
    assert result.exit_code == EXIT_AUTH
    assert result.stderr == (
        f"gemwire: the ACP endpoint http://{guarded_host}/acp/scripted refused the token "
        "(HTTP 401): no\n"
    )


def test_load_and_resume_together_name_the_flags() -> None:
    result = CliRunner().invoke(main, ["acp", "--resume", "a", "--load", "b", "hi", "--", "x"])
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.splitlines()[-1] == "Error: --load and --resume: give one session to open"
