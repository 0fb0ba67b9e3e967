from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from gemwire.testing import (
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Hang,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    Thought,
    Truncate,
    Usage,
)

STREAM = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"


def post(model: ScriptedModel, path: str, body: Any = None, key: str = "k") -> tuple[int, bytes]:
    host = urlsplit(model.url)
    conn = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body or {"contents": []}),
            headers={"x-goog-api-key": key, "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def sse_events(data: bytes) -> list[Any]:
    assert data.endswith(b"\r\n\r\n")
    chunks = data.split(b"\r\n\r\n")[:-1]
    assert all(c.startswith(b"data: ") for c in chunks)
    return [json.loads(c[len(b"data: ") :]) for c in chunks]


def test_a_reply_streams_one_event_per_chunk_and_finishes_on_the_last() -> None:
    scenario = Scenario(
        turns=[
            Reply(
                [
                    Thought("**Plan**"),
                    Text("Hello"),
                    FunctionCalls(
                        [
                            FunctionCall("read_file", {"file_path": "a"}, id="x1"),
                            FunctionCall("glob"),
                        ]
                    ),
                ],
                usage=Usage(prompt=5, output=2, cached=1, thoughts=3),
            )
        ]
    )
    with ScriptedModel(scenario) as model:
        status, data = post(model, STREAM)
    assert status == 200
    assert sse_events(data) == [
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": "**Plan**", "thought": True}]},
                    "index": 0,
                }
            ],
            "modelVersion": "gemini-x",
        },
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "Hello"}]}, "index": 0}
            ],
            "modelVersion": "gemini-x",
        },
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {
                                    "name": "read_file",
                                    "args": {"file_path": "a"},
                                    "id": "x1",
                                }
                            },
                            {"functionCall": {"name": "glob", "args": {}}},
                        ],
                    },
                    "index": 0,
                    "finishReason": "STOP",
                }
            ],
            "modelVersion": "gemini-x",
            "usageMetadata": {
                "promptTokenCount": 5,
                "candidatesTokenCount": 2,
                "cachedContentTokenCount": 1,
                "thoughtsTokenCount": 3,
                "totalTokenCount": 10,
            },
        },
    ]
    assert model.problems == []


def test_empty_reply_and_trailing_delay_end_with_a_partless_final_event() -> None:
    scenario = Scenario(turns=[Reply(), Reply([Text("a"), Delay(0)])])
    with ScriptedModel(scenario) as model:
        empty = sse_events(post(model, STREAM)[1])
        delayed = sse_events(post(model, STREAM)[1])
    assert [e["candidates"][0]["content"]["parts"] for e in empty] == [[]]
    assert empty[0]["candidates"][0]["finishReason"] == "STOP"
    assert [e["candidates"][0]["content"]["parts"] for e in delayed] == [[{"text": "a"}], []]
    assert "finishReason" not in delayed[0]["candidates"][0]


def test_turns_are_consumed_in_order_and_requests_recorded() -> None:
    scenario = Scenario(turns=[Reply([Text("one")]), Fail(429, retry_delay=1)])
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "glob"}]}],
    }
    with ScriptedModel(scenario) as model:
        assert post(model, STREAM, body)[0] == 200
        status, data = post(model, STREAM, key="other")
        side = post(model, "/v1beta/models/flash-lite:generateContent")
        count = post(model, "/v1beta/models/flash:countTokens")
        assert model.turns_served == 2
        assert model.turns_left == 0
    assert status == 429
    assert json.loads(data)["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert side[0] == 200
    side_text = json.loads(side[1])["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(side_text) == {
        "reasoning": "scripted by gemwire",
        "model_choice": "flash",
        "complexity_reasoning": "scripted by gemwire",
        "complexity_score": 10,
        "next_speaker": "user",
    }
    assert count == (200, b'{"totalTokens": 100}')
    first, second, third, fourth = model.requests
    assert (first.rpc, first.model, first.turn, first.api_key) == (
        "streamGenerateContent",
        "gemini-x",
        0,
        "k",
    )
    assert first.function_declarations() == ["read_file", "glob"]
    assert first.texts() == ["hi"]
    assert (second.turn, second.api_key) == (1, "other")
    assert (third.rpc, third.turn, fourth.rpc) == ("generateContent", None, "countTokens")
    assert model.problems == []


def test_function_responses_are_read_from_the_last_content() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "glob", "response": {"output": "a"}}}],
            },
        ]
    }
    with ScriptedModel(Scenario(turns=[Reply()])) as model:
        post(model, STREAM, body)
    assert model.requests[0].function_responses() == [{"name": "glob", "response": {"output": "a"}}]


def test_unforeseen_requests_are_refused_fast_and_listed_as_problems() -> None:
    with ScriptedModel(Scenario(turns=[])) as model:
        status, data = post(model, STREAM)
        other = post(model, "/v1beta/models/x:embedContent")
    assert status == 400
    assert json.loads(data)["error"]["message"] == (
        "gemwire scripted model: no turn left for streaming request 1 (0 of 0 served)"
    )
    assert other[0] == 404
    assert model.problems == [
        "gemwire scripted model: no turn left for streaming request 1 (0 of 0 served)",
        "gemwire scripted model: no such endpoint POST /v1beta/models/x:embedContent",
    ]


def test_a_wrong_api_key_is_refused_like_the_real_api() -> None:
    with ScriptedModel(Scenario(turns=[Reply()], api_key="right")) as model:
        status, data = post(model, STREAM, key="wrong")
        ok, _ = post(model, STREAM, key="right")
    assert status == 400
    error = json.loads(data)["error"]
    assert error["message"] == "API key not valid. Please pass a valid API key."
    assert error["details"][0]["reason"] == "API_KEY_INVALID"
    assert ok == 200
    assert model.turns_served == 1


def test_truncate_cuts_the_stream_mid_event() -> None:
    scenario = Scenario(turns=[Reply([Text("a"), Truncate()])])
    with ScriptedModel(scenario) as model, pytest.raises(http.client.IncompleteRead) as caught:
        post(model, STREAM)
    assert caught.value.partial.endswith(b'data: {"candidates": [{"content": {"ro')


def test_hang_is_released_by_stop_and_the_port_is_freed() -> None:
    model = ScriptedModel(Scenario(turns=[Reply([Text("partial"), Hang()])])).start()
    port = urlsplit(model.url).port
    outcome: list[object] = []

    def client() -> None:
        try:
            outcome.append(post(model, STREAM))
        except (http.client.HTTPException, OSError) as exc:  # the cut is the point
            outcome.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 10
    while model.turns_served == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert thread.is_alive()  # still waiting for the rest of the stream
    model.stop()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert isinstance(outcome[0], http.client.IncompleteRead)
    assert b'"text": "partial"' in outcome[0].partial
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port or 0), timeout=2)


def test_stop_closes_idle_keep_alive_connections() -> None:
    model = ScriptedModel(Scenario(turns=[Reply()])).start()
    host = urlsplit(model.url)
    conn = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
    conn.request("POST", "/v1beta/models/m:countTokens", body="{}")
    assert conn.getresponse().read() == b'{"totalTokens": 100}'
    # The connection stays open (HTTP/1.1 keep-alive); stop() must not wait for it.
    started = time.monotonic()
    model.stop()
    assert time.monotonic() - started < 5
    conn.close()


def test_when_routes_turns_by_the_users_text() -> None:
    scenario = Scenario(
        turns=[
            Reply([Text("for alpha")], when="alpha"),
            Reply([Text("for beta")], when="beta"),
            Reply([Text("for anyone")]),
        ]
    )

    def ask(text: str, role: str = "user") -> str:
        body = {"contents": [{"role": role, "parts": [{"text": text}]}]}
        events = sse_events(post(model, STREAM, body)[1])
        return str(events[0]["candidates"][0]["content"]["parts"][0]["text"])

    with ScriptedModel(scenario) as model:
        assert ask("please beta") == "for beta"
        assert ask("model says alpha", role="model") == "for anyone"  # only user text counts
        assert ask("alpha now") == "for alpha"
        assert model.turns_left == 0


def test_a_client_reset_is_not_reported(capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedModel(Scenario(turns=[])) as model:
        host = urlsplit(model.url)
        sock = socket.create_connection((host.hostname or "", host.port or 0))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.sendall(b"POST /v1beta/models/m:countTokens HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
        time.sleep(0.2)
        sock.close()  # linger 0: the server sees a reset on its next read
        time.sleep(0.2)
    assert capsys.readouterr().err == ""
