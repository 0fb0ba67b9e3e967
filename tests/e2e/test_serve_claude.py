"""``gemwire serve`` as a process, driving the real claude-code-acp 0.16.2 (scripted model).

The older pinned release: test_deny_holds.py drives the current one through serve.

The same story as test_serve.py's with Gemini, for a second agent: a session over HTTP, a
prompt whose write waits for a permission answered over HTTP, the file on disk and its
``file_changed``, every envelope in order; then SIGTERM leaves no agent behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.serve_process import Server, event, sse

from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


def allow_once(requested: dict[str, Any]) -> str:
    [option] = [o["option_id"] for o in requested["options"] if o["kind"] == "allow_once"]
    return str(option)


async def test_serve_drives_claude_code_over_http(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    write = FunctionCall(
        "mcp__acp__Write", {"file_path": str(workspace / "hello.txt"), "content": "hi there\n"}
    )
    scenario = Scenario(turns=[Reply([write]), Reply([Text("Written.")])])
    with ScriptedModel(scenario) as model:
        env = isolated_agent("claude", model, root=tmp_path, version="0.16.2")
        server = Server(env, tmp_path / "state")
        try:
            with anyio.fail_after(240):
                created = await server.post("/v1/sessions", {"agent": "claude"})
                assert created.status_code == 201, created.text
                sid = created.json()["id"]
                async with sse(server, f"/v1/sessions/{sid}/events") as stream:
                    prompted = await server.post(
                        f"/v1/sessions/{sid}/prompt", {"text": "write hello.txt"}
                    )
                    assert prompted.status_code == 202
                    requested = (await stream.until(event("permission_requested")))["event"]
                    url = f"/v1/sessions/{sid}/permissions/{requested['request_id']}"
                    answered = await server.post(url, {"option_id": allow_once(requested)})
                    assert answered.status_code == 200
                    done = (await stream.until(event("turn_completed")))["event"]
                    changed = (await stream.until(event("file_changed")))["event"]
                assert (done["ok"], done["answer"]) == (True, "Written.")
                assert done["agent"] == "acp:@zed-industries/claude-code-acp"
                assert (changed["path"], changed["change"]) == (
                    str(workspace / "hello.txt"),
                    "created",
                )
                assert (workspace / "hello.txt").read_text() == "hi there\n"
                assert stream.ids == list(range(1, len(stream.ids) + 1))
                code, stderr = await server.stop()
            assert code == 0, stderr
            assert env.live_processes() == []
        finally:
            await server.close()
