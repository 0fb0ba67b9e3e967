"""The scripted model's Anthropic and OpenAI dialects: exact event sequences, and (property)
every scenario reply reassembles, on the client side, to the same text, thoughts and calls."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings, strategies as st
from kit.hostile import texts

from gemwire.testing import (
    Fail,
    FunctionCall,
    FunctionCalls,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    Thought,
    Truncate,
    Usage,
)

TOOLS_ANTHROPIC = [{"name": "Write", "input_schema": {}}]
TOOLS_CHAT = [{"type": "function", "function": {"name": "write", "parameters": {}}}]
TOOLS_RESPONSES = [
    {"type": "function", "name": "exec_command", "parameters": {}},
    {"type": "custom", "name": "apply_patch", "format": {}},
]


def request(
    model: ScriptedModel,
    path: str,
    body: Any,
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> tuple[int, dict[str, str], bytes]:
    host = urlsplit(model.url)
    conn = http.client.HTTPConnection(host.hostname or "", host.port, timeout=10)
    try:
        conn.request(method, path, body=json.dumps(body), headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def sse(data: bytes) -> list[tuple[str | None, Any]]:
    """(event name, data) pairs; ``[DONE]`` kept as a string."""
    out: list[tuple[str | None, Any]] = []
    for block in data.decode().split("\n\n"):
        if not block:
            continue
        name = None
        payload = None
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                text = line[len("data: ") :]
                payload = text if text == "[DONE]" else json.loads(text)
        out.append((name, payload))
    return out


def anthropic_turn(model: ScriptedModel, **extra: Any) -> tuple[int, dict[str, str], bytes]:
    body = {"model": "claude-x", "stream": True, "tools": TOOLS_ANTHROPIC, "messages": []}
    return request(model, "/v1/messages?beta=true", {**body, **extra}, {"x-api-key": "k"})


def test_anthropic_stream_is_the_real_event_sequence() -> None:
    reply = Reply(
        [Thought("hm"), Text("Hi "), Text("there"), FunctionCall("Write", {"a": 1}, id="t1")],
        usage=Usage(prompt=7, output=3, cached=2, thoughts=1),
    )
    with ScriptedModel(Scenario(turns=[reply])) as model:
        status, _, data = anthropic_turn(model)
    assert status == 200
    events = sse(data)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(name == payload["type"] for name, payload in events)
    assert events[0][1]["message"]["usage"] == {
        "input_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 2,
        "output_tokens": 1,
    }
    assert [payload.get("delta") for _, payload in events[2:4]] == [
        {"type": "thinking_delta", "thinking": "hm"},
        {"type": "signature_delta", "signature": "gemwire-scripted"},
    ]
    assert events[9][1]["content_block"] == {
        "type": "tool_use",
        "id": "t1",
        "name": "Write",
        "input": {},
    }
    assert events[10][1]["delta"] == {"type": "input_json_delta", "partial_json": '{"a": 1}'}
    assert events[12][1] == {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 4},
    }


def test_anthropic_errors_side_calls_and_token_counts() -> None:
    scenario = Scenario(turns=[Fail(status=429, retry_delay=3), Fail(status=529)], api_key="k")
    with ScriptedModel(scenario) as model:
        counted = request(model, "/v1/messages/count_tokens?beta=true", {}, {"x-api-key": "k"})
        side = request(model, "/v1/messages", {"model": "m", "messages": []}, {"x-api-key": "k"})
        limited = anthropic_turn(model)
        overloaded = anthropic_turn(model)
        bad_key = request(model, "/v1/messages", {}, {"x-api-key": "wrong"})
    assert (counted[0], json.loads(counted[2])) == (200, {"input_tokens": 100})
    assert json.loads(side[2])["stop_reason"] == "end_turn"
    assert limited[0] == 429
    assert limited[1]["retry-after"] == "3"
    assert json.loads(limited[2])["error"]["type"] == "rate_limit_error"
    assert (overloaded[0], json.loads(overloaded[2])["error"]) == (
        529,
        {"type": "overloaded_error", "message": "Overloaded"},
    )
    assert (bad_key[0], json.loads(bad_key[2])["error"]["type"]) == (401, "authentication_error")
    assert [r.turn for r in model.requests if r.rpc == "messages"] == [None, 0, 1, None]


def test_chat_completions_stream_tool_calls_and_usage() -> None:
    reply = Reply([Text("Hi"), Thought("hm"), FunctionCall("write", {"p": "x"})])
    with ScriptedModel(Scenario(turns=[reply])) as model:
        body = {"model": "m", "stream": True, "tools": TOOLS_CHAT, "messages": []}
        status, _, data = request(model, "/v1/chat/completions", body)
    assert status == 200
    events = [payload for _, payload in sse(data)]
    assert events[-1] == "[DONE]"
    deltas = [e["choices"][0]["delta"] for e in events[:-2]]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"content": "Hi"},
        {"reasoning_content": "hm"},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_gemwire_0_0",
                    "type": "function",
                    "function": {"name": "write", "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"p": "x"}'}}]},
        {},
    ]
    assert events[-3]["choices"][0]["finish_reason"] == "tool_calls"
    assert events[-2]["usage"]["total_tokens"] == 110


def test_a_chat_request_without_tools_is_a_side_call() -> None:
    with ScriptedModel(Scenario(turns=[Reply([Text("the turn")])])) as model:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "t"}]}
        _, _, data = request(model, "/v1/chat/completions", body)
        models = request(model, "/v1/models", None, method="GET")
    text = "".join(
        p["choices"][0]["delta"].get("content") or ""
        for _, p in sse(data)
        if p != "[DONE]" and p["choices"]
    )
    assert json.loads(text)["next_speaker"] == "user"
    assert model.turns_left == 1
    assert json.loads(models[2])["data"][0]["id"] == "scripted"


def test_a_title_request_is_answered_with_a_plain_title() -> None:
    """OpenCode's title agent keeps the first line of the answer as the session's title."""
    title = "Generate a title for this conversation:\n"
    with ScriptedModel(Scenario(turns=[])) as model:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": title}]}
        _, _, data = request(model, "/v1/chat/completions", body)
    text = "".join(
        p["choices"][0]["delta"].get("content") or ""
        for _, p in sse(data)
        if p != "[DONE]" and p["choices"]
    )
    assert text == "Scripted session"


def test_responses_stream_custom_tools_and_errors() -> None:
    patch = "*** Begin Patch\n*** End Patch\n"
    reply = Reply([Text("ok"), FunctionCall("apply_patch", {"input": patch}, id="c1")])
    scenario = Scenario(turns=[reply, Fail(status=429)], api_key="k")
    with ScriptedModel(scenario) as model:
        body = {"model": "gpt", "stream": True, "tools": TOOLS_RESPONSES, "input": []}
        auth = {"Authorization": "Bearer k"}
        status, _, data = request(model, "/v1/responses", body, auth)
        limited = request(model, "/v1/responses", body, auth)
        bad_key = request(model, "/v1/responses", body, {"Authorization": "Bearer no"})
    assert status == 200
    events = sse(data)
    assert [name for name, _ in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [p["sequence_number"] for _, p in events] == list(range(1, 14))
    completed = events[-1][1]["response"]
    assert [item["type"] for item in completed["output"]] == ["message", "custom_tool_call"]
    assert completed["output"][1] == {
        "id": "fc_gemwire_0_1",
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": "c1",
        "name": "apply_patch",
        "input": patch,
    }
    assert (limited[0], json.loads(limited[2])["error"]["code"]) == (429, "rate_limit_exceeded")
    assert (bad_key[0], json.loads(bad_key[2])["error"]["code"]) == (401, "invalid_api_key")


def test_truncate_cuts_each_dialect_mid_event() -> None:
    scenario = Scenario(turns=[Reply([Text("a"), Truncate()])] * 2)
    body = {"model": "m", "stream": True, "tools": TOOLS_CHAT, "messages": []}
    with ScriptedModel(scenario) as model:
        with pytest.raises(http.client.IncompleteRead) as anthropic:
            anthropic_turn(model)
        with pytest.raises(http.client.IncompleteRead) as chat:
            request(model, "/v1/chat/completions", body)
    assert anthropic.value.partial.endswith(b'{"type": "content_block_de')
    assert chat.value.partial.endswith(b'"object": "chat.completion.ch')


chunks = st.lists(
    st.one_of(
        st.builds(Text, texts(min_size=1, max_size=20)),
        st.builds(Thought, texts(min_size=1, max_size=20)),
        st.builds(
            FunctionCall,
            st.sampled_from(["Write", "write", "exec_command"]),
            st.dictionaries(texts(max_size=5), st.integers(), max_size=3),
        ),
        st.builds(
            FunctionCalls,
            st.lists(st.builds(FunctionCall, st.just("write")), min_size=1, max_size=3),
        ),
    ),
    max_size=8,
)


def expected(reply: Reply) -> tuple[str, str, list[tuple[str, Any]]]:
    calls = [
        c
        for chunk in reply.chunks
        for c in (chunk.calls if isinstance(chunk, FunctionCalls) else [chunk])
        if isinstance(c, FunctionCall)
    ]
    return (
        "".join(c.text for c in reply.chunks if isinstance(c, Text)),
        "".join(c.text for c in reply.chunks if isinstance(c, Thought)),
        [(c.name, c.args) for c in calls],
    )


@settings(max_examples=40, deadline=None)
@given(chunks)
def test_every_dialect_reassembles_to_the_scenario(parts: list[Any]) -> None:
    reply = Reply(parts)
    with ScriptedModel(Scenario(turns=[reply] * 3)) as model:
        _, _, anthropic = anthropic_turn(model)
        body = {"model": "m", "stream": True, "tools": TOOLS_CHAT, "messages": []}
        _, _, chat = request(model, "/v1/chat/completions", body)
        body = {"model": "m", "stream": True, "tools": TOOLS_RESPONSES, "input": []}
        _, _, responses = request(model, "/v1/responses", body)

    text, thoughts, calls = "", "", {}
    for _, event in sse(anthropic):
        if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
            calls[event["index"]] = [event["content_block"]["name"], ""]
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            text += delta.get("text", "")
            thoughts += delta.get("thinking", "")
            if delta["type"] == "input_json_delta":
                calls[event["index"]][1] += delta["partial_json"]
    got = [(name, json.loads(args)) for name, args in calls.values()]
    assert (text, thoughts, got) == expected(reply)

    text, thoughts, chat_calls = "", "", []
    for _, event in sse(chat):
        if event == "[DONE]" or not event["choices"]:
            continue
        delta = event["choices"][0]["delta"]
        text += delta.get("content") or ""
        thoughts += delta.get("reasoning_content") or ""
        for call in delta.get("tool_calls") or []:
            if "id" in call:
                chat_calls.append([call["function"]["name"], ""])
            chat_calls[call["index"]][1] += call["function"]["arguments"]
    got = [(name, json.loads(args)) for name, args in chat_calls]
    assert (text, thoughts, got) == expected(reply)

    output = sse(responses)[-1][1]["response"]["output"]
    text = "".join(i["content"][0]["text"] for i in output if i["type"] == "message")
    thoughts = "".join(i["summary"][0]["text"] for i in output if i["type"] == "reasoning")
    got = [(i["name"], json.loads(i["arguments"])) for i in output if i["type"] == "function_call"]
    assert (text, thoughts, got) == expected(reply)
