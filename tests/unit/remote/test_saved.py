"""Saved sessions and usage through gemwire.remote: the query it sends, and the server's
answer decoded into the same types `gemwire.sessions` gives (the answers here are those
types encoded, in the `gemwire.serve_api` Structs the server's routes encode)."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest

from gemwire.events import Event, MessageDelta, UserMessage
from gemwire.remote import connect
from gemwire.serve_api import ErrorBody, ErrorDetail, SavedAgent, SavedEvents, SavedSessions
from gemwire.sessions import SessionInfo, UsageReport, UsageRow

pytestmark = pytest.mark.anyio

INFO = SessionInfo(
    id="8f1c2d3e-0000-4000-8000-000000000001",
    path="/home/u/.gemini/tmp/p/chats/session-1.jsonl",
    project="/srv/p",
    format="jsonl",
    kind="main",
    start_time="2026-11-24T10:00:00Z",
    last_updated="2026-11-24T10:05:00Z",
    summary="Fix the test",
    first_prompt="fix the failing test",
    messages=4,
    resumable=True,
)
EVENTS: list[Event] = [
    UserMessage(agent="gemini", text="hi"),
    MessageDelta(agent="gemini", text="Hello"),
]
REPORT = UsageReport(
    by="model",
    rows=[UsageRow(key="gemini-2.5-pro", requests=2, input_tokens=100, total_tokens=120)],
    total=UsageRow(key="total", requests=2, input_tokens=100, total_tokens=120),
    sessions=1,
    files=1,
    problems=0,
    agents=["gemini"],
    prices_as_of="2026-11-01",
    prices_source="https://ai.google.dev/pricing",
)


class Server:
    """Answers the three routes; keeps each request's path and query."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, str]]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked.append((request.url.raw_path.decode().split("?")[0], dict(request.url.params)))
        answer: Any
        if request.url.path == "/v1/saved-sessions":
            agent = SavedAgent("gemini", "Gemini CLI")
            answer = SavedSessions(
                sessions=[INFO], total=1, offset=0, agents=[agent], projects=["/srv/p"]
            )
        elif request.url.path == "/v1/usage":
            answer = REPORT
        elif request.url.path.startswith("/v1/saved-sessions/"):
            answer = SavedEvents(EVENTS)
        else:
            answer = ErrorBody(ErrorDetail("not_found", "Not Found"))
            return httpx.Response(404, content=msgspec.json.encode(answer))
        return httpx.Response(200, content=msgspec.json.encode(answer))


async def test_saved_sessions_their_events_and_usage() -> None:
    answers = Server()
    async with connect(
        "http://127.0.0.1:8765", token="t", transport=httpx.MockTransport(answers)
    ) as server:
        assert await server.saved_sessions() == [INFO]
        assert await server.saved_sessions("claude", project="/srv/p", since="7d", q="fix") == [
            INFO
        ]
        assert await server.saved_session("gemini", "a/b", project="/srv/p") == EVENTS
        assert await server.usage(by="model", since="2026-11-01") == REPORT
    assert answers.asked == [
        ("/v1/saved-sessions", {"agent": "all"}),
        ("/v1/saved-sessions", {"agent": "claude", "project": "/srv/p", "since": "7d", "q": "fix"}),
        ("/v1/saved-sessions/gemini/a%2Fb", {"format": "events", "project": "/srv/p"}),
        ("/v1/usage", {"agent": "all", "by": "model", "since": "2026-11-01"}),
    ]
