"""``/v1/saved-sessions`` and ``/v1/usage``: what the command line prints, over HTTP, from
isolated homes made of the recorded sessions (never the real ones); hostile ids, queries and
homes get a JSON error or a listing with problems, never a traceback or a file outside."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings, strategies as st
from kit.corpus import FIXTURES
from kit.materialized import Materialized
from kit.server import Served, make_config, served

from gemwire.cli import main
from gemwire.server import create_app
from gemwire.server.routes_saved import TRANSCRIPT_CSP
from gemwire.sessions import sources
from gemwire.sessions._reading import MAX_SESSION_BYTES
from gemwire.sessions.claude import project_slug as claude_slug
from gemwire.sessions.qwen import project_slug as qwen_slug

pytestmark = pytest.mark.anyio


def add_recording(home: Path, folder: Path, agent: str, case: str, workspace: Path) -> str:
    """A recorded Claude Code or Qwen Code session of ``workspace`` in ``folder``; its id."""
    recorded = FIXTURES / agent / ("0.16.2" if agent == "claude" else "0.24.4") / f"{case}.jsonl"
    text = recorded.read_text().replace("__WORKSPACE__", str(workspace))
    session_id: str = json.loads(text.splitlines()[0])["sessionId"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{session_id}.jsonl").write_text(text)
    return session_id


class Homes:
    """One home holding a Gemini, a Claude Code and a Qwen Code session of one workspace."""

    def __init__(self, run: Materialized) -> None:
        self.home = run.home
        self.workspace = run.workspace
        self.gemini_id = json.loads(run.session_files()[0].read_text().splitlines()[0])["sessionId"]
        claude = self.home / ".claude" / "projects" / claude_slug(str(self.workspace))
        self.claude_id = add_recording(self.home, claude, "claude", "answer", self.workspace)
        qwen = self.home / ".qwen" / "projects" / qwen_slug(str(self.workspace)) / "chats"
        self.qwen_id = add_recording(self.home, qwen, "qwen", "edit", self.workspace)

    def cli(self, *args: str, status: int = 0) -> str:
        """``gemwire ARGS`` with these homes (each agent's own variable), its stdout."""
        env = {
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "QWEN_RUNTIME_DIR": str(self.home / ".qwen"),
            "GEMINI_CLI_HOME": str(self.home),
        }
        result = CliRunner(env=env).invoke(main, list(args))
        assert result.exit_code == status, result.output
        return result.stdout


@pytest.fixture
def homes(materialize: Callable[[str, str], Materialized]) -> Homes:
    return Homes(materialize("0.61.0", "plain_answer"))


@pytest.fixture
async def server(homes: Homes, tmp_path: Path) -> AsyncIterator[Served]:
    config = make_config(
        str(homes.workspace), str(tmp_path / "state"), sessions_home=str(homes.home)
    )
    async with served(create_app(config)) as s:
        yield s


def lines(text: str) -> list[object]:
    return [json.loads(line) for line in text.splitlines()]


def error(kind: str, message: str) -> dict[str, object]:
    return {"error": {"kind": kind, "message": message}}


def newest_first(listed: list[Any]) -> list[Any]:
    """The CLI's lines as the server orders them: last updated latest first."""
    return sorted(listed, key=lambda s: s["last_updated"] or s["start_time"], reverse=True)


AGENTS = [
    {"name": "gemini", "title": "Gemini"},
    {"name": "claude", "title": "Claude Code"},
    {"name": "codex", "title": "Codex"},
    {"name": "qwen", "title": "Qwen Code"},
    {"name": "opencode", "title": "OpenCode"},
    {"name": "antigravity", "title": "Antigravity"},
]


async def test_the_listing_is_the_cli_s_json_lines_newest_first(
    server: Served, homes: Homes
) -> None:
    response = await server.request("GET", "/v1/saved-sessions")
    assert response.status_code == 200
    cli = lines(homes.cli("sessions", "list", "--agent", "all", "--all-projects", "--json"))
    assert response.json() == {
        "sessions": newest_first(cli),
        "total": 3,
        "offset": 0,
        "agents": AGENTS,
        "projects": [str(homes.workspace)],
        "unread": {},
    }
    listed = response.json()["sessions"]
    # The recordings were made one after the other: Qwen Code's last, Gemini CLI's first.
    assert [(s["agent"], s["id"]) for s in listed] == [
        ("qwen", homes.qwen_id),
        ("claude", homes.claude_id),
        ("gemini", homes.gemini_id),
    ]


async def test_the_listing_comes_a_page_at_a_time(server: Served, homes: Homes) -> None:
    async def page(query: str) -> tuple[list[str], int, int]:
        response = await server.request("GET", f"/v1/saved-sessions?{query}")
        assert response.status_code == 200, response.text
        body = response.json()
        return [s["id"] for s in body["sessions"]], body["total"], body["offset"]

    newest = [homes.qwen_id, homes.claude_id, homes.gemini_id]
    assert await page("limit=2") == (newest[:2], 3, 0)
    assert await page("limit=2&offset=2") == (newest[2:], 3, 2)
    assert await page("limit=2&offset=3") == ([], 3, 3)
    assert await page("limit=0") == ([], 3, 0)
    assert await page("offset=1") == (newest[1:], 3, 1)
    assert await page("agent=claude&limit=1") == ([homes.claude_id], 1, 0)
    for query, message in (
        ("limit=-1", "limit must be a whole number of sessions, not '-1'"),
        ("offset=x", "offset must be a whole number of sessions, not 'x'"),
        ("limit=1e3", "limit must be a whole number of sessions, not '1e3'"),
        ("limit=9999999999", "limit must be a whole number of sessions, not '9999999999'"),
    ):
        response = await server.request("GET", f"/v1/saved-sessions?{query}")
        assert (response.status_code, response.json()) == (400, error("bad_request", message))


async def test_a_range_ending_before_it_starts_is_refused(server: Served) -> None:
    for path in ("/v1/saved-sessions", "/v1/saved-sessions/search?text=a&", "/v1/usage"):
        sep = "" if path.endswith("&") else "?"
        response = await server.request("GET", f"{path}{sep}since=2026-11-02&until=2026-11-01")
        message = "since (2026-11-02) is after until (2026-11-01): nothing can match"
        assert (response.status_code, response.json()) == (400, error("bad_request", message))
    # One day, from its start to its end, and a moment in it, are fine.
    for since, until in (
        ("2026-11-01", "2026-11-01"),
        ("2026-11-01T23:00", "2026-11-01"),
        ("2026-11-01", "2026-11-01T00:00"),
    ):
        response = await server.request(
            "GET", "/v1/saved-sessions", params={"since": since, "until": until}
        )
        assert response.status_code == 200, (since, until)


async def test_agent_project_search_and_dates_filter_the_listing(
    server: Served, homes: Homes
) -> None:
    async def ids(query: str) -> list[str]:
        response = await server.request("GET", f"/v1/saved-sessions?{query}")
        assert response.status_code == 200, response.text
        return [s["id"] for s in response.json()["sessions"]]

    assert await ids("agent=claude") == [homes.claude_id]
    project = quote(str(homes.workspace))
    gemini_project = lines(
        homes.cli("sessions", "list", "--project", str(homes.workspace), "--json")
    )
    response = await server.request("GET", f"/v1/saved-sessions?agent=gemini&project={project}")
    assert response.json()["sessions"] == gemini_project
    assert await ids(f"project={quote('/elsewhere')}") == []
    assert await ids("since=2000-01-01&until=2999-12-31") == [
        homes.qwen_id,
        homes.claude_id,
        homes.gemini_id,
    ]
    assert await ids("since=2999-01-01") == []
    assert await ids("until=2000-01-01T00:00:00%2B00:00") == []
    assert await ids(f"q={homes.qwen_id[:8].upper()}") == [homes.qwen_id]


async def test_search_is_the_cli_s_json_lines(server: Served, homes: Homes) -> None:
    project = str(homes.workspace)
    cases = [
        ({"text": "HAS BEEN updated"}, ()),
        ({"text": "line", "agent": "qwen"}, ("--agent", "qwen")),
        ({"text": project}, ()),
        ({"text": project, "project": project}, ("--project", project)),
        ({"text": project, "since": "2000-01-01", "until": "2999-12-31"},
         ("--since", "2000-01-01", "--until", "2999-12-31")),
    ]  # fmt: skip
    for params, args in cases:
        response = await server.request("GET", "/v1/saved-sessions/search", params=params)
        assert response.status_code == 200, response.text
        cli_args = args if "--agent" in args else ("--agent", "all", *args)
        expected = lines(homes.cli("sessions", "search", params["text"], *cli_args, "--json"))
        assert response.json() == {"hits": expected, "more": False, "unread": {}}, params
    every = await server.request("GET", "/v1/saved-sessions/search", params={"text": "O"})
    assert [(h["agent"], h["id"]) for h in every.json()["hits"]] == [
        ("gemini", homes.gemini_id),
        ("claude", homes.claude_id),
        ("qwen", homes.qwen_id),
    ]
    in_project = f"/v1/saved-sessions/search?text={quote(project)}"
    [qwen] = (await server.request("GET", in_project)).json()["hits"]
    assert (qwen["id"], qwen["title"], qwen["matches"]) == (homes.qwen_id, "go", 3)
    assert [q["field"] for q in qwen["quotes"]] == ["tool input", "tool input", "tool output"]


async def test_search_stops_at_the_limit_and_takes_text_literally(
    server: Served, homes: Homes
) -> None:
    expected = lines(homes.cli("sessions", "search", "o", "--agent", "all", "--json"))
    assert len(expected) == 3
    for limit, more in ((1, True), (2, True), (3, False), (200, False)):
        response = await server.request(
            "GET", "/v1/saved-sessions/search", params={"text": "o", "limit": str(limit)}
        )
        assert response.json() == {"hits": expected[:limit], "more": more, "unread": {}}, limit
    for pattern in (".*", "l.n", "[a-z]+", "(?i)line"):
        homes.cli("sessions", "search", pattern, "--agent", "all", "--json", status=1)
        response = await server.request(
            "GET", "/v1/saved-sessions/search", params={"text": pattern}
        )
        assert response.json() == {"hits": [], "more": False, "unread": {}}, pattern


async def test_search_names_a_file_whose_name_is_not_utf8(server: Served, homes: Homes) -> None:
    [file] = (homes.home / ".gemini").rglob("session-*.jsonl")
    other = "0a1b2c3d-0000-4000-8000-00000000000f"
    text = file.read_text().replace(homes.gemini_id, other)
    odd = file.with_name(os.fsdecode(b"session-2026-11-21T10-00-0a1b\xff.jsonl"))
    odd.write_text(text)
    response = await server.request("GET", "/v1/saved-sessions/search?text=o&agent=gemini")
    assert response.status_code == 200, response.text
    hits = response.json()["hits"]
    assert hits == lines(homes.cli("sessions", "search", "o", "--agent", "gemini", "--json"))
    assert sorted(hit["id"] for hit in hits) == sorted((homes.gemini_id, other))
    [named] = [hit for hit in hits if hit["id"] == other]
    assert named["path"] == str(file.with_name("session-2026-11-21T10-00-0a1b\ufffd.jsonl"))


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "text is missing: what to look for"),
        ("?text=", "text is missing: what to look for"),
        ("?text=a%00b", "text holds a NUL byte"),
        ("?text=" + "a" * 4097, "text is over 4096 characters"),
        ("?text=a&limit=0", "limit must be 1 to 200, not '0'"),
        ("?text=a&limit=201", "limit must be 1 to 200, not '201'"),
        ("?text=a&limit=-1", "limit must be 1 to 200, not '-1'"),
        ("?text=a&limit=%D9%A1", "limit must be 1 to 200, not '\u0661'"),
        ("?text=a&agent=nobody",
         "unknown agent 'nobody': one of gemini, claude, codex, qwen, opencode, antigravity, or all"),
        ("?text=a&project=%00", "project holds a NUL byte"),
        ("?text=a&since=soon", ("since: 'soon' is not a day or a time: 2026-11-23, today, "
         "yesterday, 7d (days ago), 12h (hours ago) or 2026-11-23T09:00")),
    ],
)  # fmt: skip
async def test_a_hostile_search_is_a_json_error(server: Served, query: str, message: str) -> None:
    response = await server.request("GET", "/v1/saved-sessions/search" + query)
    assert (response.status_code, response.json()) == (400, error("bad_request", message))


async def test_each_format_is_the_cli_s_export(server: Served, homes: Homes) -> None:
    path = f"/v1/saved-sessions/gemini/{homes.gemini_id}"
    export = ("sessions", "export", homes.gemini_id, "--project", str(homes.workspace))

    events = await server.request("GET", path)
    assert events.headers["content-type"] == "application/json"
    assert events.json() == {"events": lines(homes.cli(*export))}
    assert (await server.request("GET", path + "?format=events")).json() == events.json()

    markdown = await server.request("GET", path + "?format=markdown")
    assert markdown.headers["content-type"] == "text/markdown; charset=utf-8"
    assert markdown.text == homes.cli(*export, "--format", "markdown")

    html = await server.request("GET", path + "?format=html")
    assert html.headers["content-type"] == "text/html; charset=utf-8"
    assert html.headers["content-security-policy"] == TRANSCRIPT_CSP
    assert html.headers["x-content-type-options"] == "nosniff"
    assert html.text == homes.cli(*export, "--format", "html")

    as_json = await server.request("GET", path + "?format=json")
    [info] = lines(homes.cli("sessions", "list", "--project", str(homes.workspace), "--json"))
    messages = lines(homes.cli(*export, "--format", "claude"))
    assert as_json.json() == {"session": info, "messages": messages}


async def test_another_agent_s_session_reads_in_every_format_but_json(
    server: Served, homes: Homes
) -> None:
    for agent, session_id in (("claude", homes.claude_id), ("qwen", homes.qwen_id)):
        path = f"/v1/saved-sessions/{agent}/{session_id}"
        export = ("sessions", "export", session_id, "--agent", agent, "--project",
                  str(homes.workspace))  # fmt: skip
        response = await server.request("GET", path)
        assert response.json() == {"events": lines(homes.cli(*export))}
        for fmt in ("html", "markdown"):
            transcript = await server.request("GET", f"{path}?format={fmt}")
            assert transcript.text == homes.cli(*export, "--format", fmt), (agent, fmt)
        redacted = await server.request("GET", f"{path}?format=markdown&redact=true")
        assert redacted.text == homes.cli(*export, "--format", "markdown", "--redact")
        as_json = await server.request("GET", f"{path}?format=json")
        whose = {"claude": "Claude Code", "qwen": "Qwen Code"}[agent]
        assert (as_json.status_code, as_json.json()) == (
            400,
            error("bad_request", f"format=json of a {whose} session is not supported yet "
                  "(events, html and markdown are)"),
        )  # fmt: skip


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/v1/saved-sessions/gemini/%2e%2e", 404, "no gemini session '..'"),
        ("/v1/saved-sessions/gemini/..%2F..%2F..%2Fetc%2Fpasswd", 404, "Not Found"),
        ("/v1/saved-sessions/gemini/latest", 404, "no gemini session 'latest'"),
        ("/v1/saved-sessions/gemini/1", 404, "no gemini session '1'"),
        ("/v1/saved-sessions/gemini/nope%00", 400, "the path holds a NUL byte"),
        ("/v1/saved-sessions/gemini/" + "x" * 5000, 404,
         "no gemini session: the id is over 256 characters"),
        ("/v1/saved-sessions/%2e%2e/x", 404,
         "unknown agent '..': one of gemini, claude, codex, qwen, opencode, antigravity, or all"),
    ],
)  # fmt: skip
async def test_a_hostile_id_is_a_json_error(
    server: Served, path: str, status: int, message: str
) -> None:
    response = await server.request("GET", path)
    kind = "not_found" if status == 404 else "bad_request"
    assert (response.status_code, response.json()) == (status, error(kind, message))


async def test_a_session_file_s_path_is_not_an_id(server: Served, homes: Homes) -> None:
    # The file is the agent's own and in its home: still not reachable by path.
    [file] = (homes.home / ".gemini").rglob("session-*.jsonl")
    response = await server.request("GET", f"/v1/saved-sessions/gemini/{quote(str(file), safe='')}")
    assert response.status_code == 404
    assert response.json()["error"]["kind"] == "not_found"


async def test_an_unknown_agent_id_or_option_is_named(server: Served, homes: Homes) -> None:
    cases = {
        "/v1/saved-sessions/gemini/0a1b2c3d-0000-4000-8000-000000000009": (
            404,
            error("not_found", "no gemini session '0a1b2c3d-0000-4000-8000-000000000009'"),
        ),
        "/v1/saved-sessions/nobody/x": (
            404,
            error(
                "not_found",
                "unknown agent 'nobody': one of gemini, claude, codex, qwen, opencode, antigravity, or all",
            ),
        ),
        f"/v1/saved-sessions/gemini/{homes.gemini_id}?format=pdf": (
            400,
            error("bad_request", "format must be one of events, json, markdown, html, not 'pdf'"),
        ),
        "/v1/saved-sessions?agent=nobody": (
            400,
            error(
                "bad_request",
                "unknown agent 'nobody': one of gemini, claude, codex, qwen, opencode, antigravity, or all",
            ),
        ),
        "/v1/saved-sessions?since=soon": (
            400,
            error(
                "bad_request",
                "since: 'soon' is not a day or a time: 2026-11-23, today, yesterday, "
                "7d (days ago), 12h (hours ago) or 2026-11-23T09:00",
            ),
        ),
        "/v1/saved-sessions?project=%00": (400, error("bad_request", "project holds a NUL byte")),
        "/v1/saved-sessions?project=" + "a" * 60_000: (
            400,
            error("bad_request", "project is over 4096 characters"),
        ),
        "/v1/usage?by=year": (
            400,
            error(
                "bad_request",
                "by must be one of day, week, month, model, project, session, not 'year'",
            ),
        ),
    }
    for path, (status, body) in cases.items():
        response = await server.request("GET", path)
        assert (response.status_code, response.json()) == (status, body), path


async def test_usage_is_the_cli_s_report(server: Served, homes: Homes) -> None:
    for query, args in (
        ("", ()),
        ("?by=model", ("--by", "model")),
        ("?by=project&since=2000-01-01", ("--by", "project", "--since", "2000-01-01")),
        ("?agent=qwen&by=session", ("--agent", "qwen", "--by", "session")),
        ("?until=2000-01-01", ("--until", "2000-01-01")),
    ):
        response = await server.request("GET", "/v1/usage" + query)
        assert response.status_code == 200
        cli_args = args if "--agent" in args else ("--agent", "all", *args)
        assert response.json() == json.loads(homes.cli("usage", *cli_args, "--json")), query
    every = (await server.request("GET", "/v1/usage")).json()
    # Every agent the registry reads (a new source is asked too), and the three sessions.
    assert (every["agents"], every["sessions"]) == ([s.agent for s in sources("all")], 3)


async def test_routes_need_the_token(server: Served) -> None:
    paths = ("/v1/saved-sessions", "/v1/saved-sessions/search?text=a",
             "/v1/saved-sessions/gemini/x", "/v1/usage")  # fmt: skip
    for path in paths:
        response = await server.http.get(path, headers={"Authorization": "Bearer wrong"})
        assert (response.status_code, response.json()["error"]["kind"]) == (401, "unauthorized")


@pytest.mark.timeout(30)  # a FIFO read would hang; /dev/zero would eat the memory
async def test_a_hostile_home_lists_with_problems(tmp_path: Path, homes: Homes) -> None:
    chats = next((homes.home / ".gemini" / "tmp").glob("*/chats"))
    name = "session-2026-11-21T10-00-{}.jsonl".format
    (chats / name("11111111")).symlink_to(name("11111111"))
    os.mkfifo(chats / name("22222222"))
    (chats / name("33333333")).symlink_to("/dev/zero")
    (chats / name("44444444")).touch()
    os.truncate(chats / name("44444444"), MAX_SESSION_BYTES + 1)  # sparse: nothing written
    (homes.home / ".claude" / "projects" / "loop").symlink_to("loop")
    config = make_config(str(tmp_path), str(tmp_path / "state"), sessions_home=str(homes.home))
    async with served(create_app(config)) as server:
        listed = await server.request("GET", "/v1/saved-sessions")
        assert listed.json()["sessions"] == newest_first(
            lines(homes.cli("sessions", "list", "--agent", "all", "--all-projects", "--json"))
        )
        assert [s["id"] for s in listed.json()["sessions"]] == [
            homes.qwen_id,
            homes.claude_id,
            homes.gemini_id,
        ]
        report = (await server.request("GET", "/v1/usage?agent=gemini")).json()
        assert (report["files"], report["problems"]) == (5, 4)
        assert report == json.loads(homes.cli("usage", "--json"))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    session_id=st.text(min_size=1, max_size=300),
    value=st.text(max_size=300),
)
@example(session_id="0/", value="")  # Starlette redirected it (307) to the path without "/"
def test_any_id_or_query_gets_a_json_answer(
    homes: Homes, tmp_path: Path, session_id: str, value: str
) -> None:
    config = make_config(
        str(homes.workspace), str(tmp_path / "state"), sessions_home=str(homes.home)
    )

    async def ask() -> list[httpx.Response]:
        async with served(create_app(config)) as server:
            path = "/v1/saved-sessions/gemini/" + quote(session_id, safe="")
            params = {"project": value, "q": value, "since": value}
            return [
                await server.request("GET", path, params={"format": value}),
                await server.request("GET", "/v1/saved-sessions", params=params),
                await server.request("GET", "/v1/usage", params={"until": value, "by": value}),
                await server.request(
                    "GET", "/v1/saved-sessions/search", params={"text": value, "limit": value}
                ),
            ]

    for response in anyio.run(ask):
        assert response.status_code in (200, 400, 404), response.text
        body = response.json()
        if response.status_code != 200:
            assert set(body["error"]) == {"kind", "message"}


async def test_a_home_that_cannot_be_read_is_named_with_why(tmp_path: Path, homes: Homes) -> None:
    database = homes.home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"not a database" * 100)
    config = make_config(str(tmp_path), str(tmp_path / "state"), sessions_home=str(homes.home))
    async with served(create_app(config)) as server:
        listed = (await server.request("GET", "/v1/saved-sessions")).json()
        found = (await server.request("GET", "/v1/saved-sessions/search?text=zzz")).json()
    assert listed["unread"] == {str(database): "file is not a database"}
    assert [s["id"] for s in listed["sessions"]] == [
        homes.qwen_id,
        homes.claude_id,
        homes.gemini_id,
    ]
    assert (found["hits"], found["unread"]) == ([], listed["unread"])


async def test_search_masks_the_secret_values_of_the_servers_environment(
    server: Served, homes: Homes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Qwen session quotes its workspace in its tool calls: as a secret value, it is
    # masked like in every export (it was shown as it is).
    secret = str(homes.workspace)
    params = {"text": secret, "agent": "qwen"}
    shown = await server.request("GET", "/v1/saved-sessions/search", params=params)
    assert secret in shown.text
    monkeypatch.setenv("PROBE_API_KEY", secret)
    response = await server.request("GET", "/v1/saved-sessions/search", params=params)
    [hit] = response.json()["hits"]
    assert secret not in response.text
    assert all("***" in quote["text"] for quote in hit["quotes"])
