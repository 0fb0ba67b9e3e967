"""Continuing a saved session from the page, in a real browser: the Sessions view's Continue
button on a saved Gemini session starts a server session of the agent the server runs under
that name (``POST /v1/sessions`` with ``continue``), and the conversation view shows the saved
session's own history (as the Sessions view shows it), the agent's replay of it collapsed,
and takes the next prompt."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_scripted import ScriptedAgent
from anyio.abc import TaskGroup
from kit.browser import watched_page
from kit.materialized import Materialized
from kit.web import ScriptedAgents, WebAgent, live_server
from playwright.sync_api import Browser, Page, expect

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server.agents import AgentEntry
from gemwire.server.responses import NotFound

LOADED: list[dict[str, Any]] = []
"""The ``session/load`` params each `LoadingWebAgent` was sent."""
DONE = re.compile(r"Done · end_turn · [\d.]+ m?s")


async def echo(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, f"re: {params['prompt'][0]['text']}")
    return "end_turn"


class LoadingWebAgent(WebAgent):
    """A `WebAgent` that loads any session, replaying one exchange of it first."""

    async def _answer(self, message: dict[str, Any]) -> None:
        if message["method"] != "session/load":
            await super()._answer(message)
            return
        params = message["params"]
        LOADED.append(params)
        self.cwd = params["cwd"]
        sid = params["sessionId"]
        await self.update(sid, "user_message_chunk", content={"type": "text", "text": "earlier"})
        await self.say(sid, "an earlier answer")
        await self.send({"id": message["id"], "result": {}})


class GeminiNamed(ScriptedAgents):
    """The server's ``gemini`` is a `LoadingWebAgent`."""

    def agents(self) -> list[AgentEntry]:
        return [
            AgentEntry(name="gemini", title="Gemini", transport="acp", available=True, command=[])
        ]

    def options(self, name: str, cwd: str) -> AcpOptions:
        if name != "gemini":
            raise NotFound(f"unknown agent {name!r}; known: gemini")
        return AcpOptions(cwd=cwd)

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = LoadingWebAgent(
            agent_end, name="scripted", on_prompt=self.on_prompt, capabilities={"loadSession": True}
        )
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


def shown(page: Page, selector: str) -> list[str]:
    """The text of each thing ``selector`` finds, without a live call's clock time."""
    found: list[str] = page.evaluate(
        """(s) => [...document.querySelectorAll(s)].map(e => {
            const copy = e.cloneNode(true);
            copy.querySelectorAll('.time').forEach(t => t.remove());
            return copy.textContent;
        })""",
        selector,
    )
    return found


def test_a_saved_session_continues_from_the_sessions_view(
    chromium_browser: Browser,
    materialize: Callable[[str, str], Materialized],
    tmp_path: Path,
) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    LOADED.clear()

    def launcher(tg: TaskGroup) -> GeminiNamed:
        return GeminiNamed(tg, echo)

    with (
        live_server(
            str(run.workspace),
            str(tmp_path / "state"),
            launcher=launcher,
            sessions_home=str(run.home),
        ) as server,
        watched_page(chromium_browser, allowed=server.same_origin) as watched,
    ):
        page = watched.page
        server.log_in(page)
        page.goto(f"{server.origin}/#/sessions")
        page.locator("table.list td.summary a").first.click()
        saved = re.fullmatch(r".*#/sessions/gemini/(.+)", page.url)
        assert saved is not None
        expect(page.locator(".stream .card").first).to_be_visible()
        title = page.locator(".session-title").text_content()
        as_saved = shown(page, ".stream > *")
        assert title != saved[1]  # its summary or first prompt, not its id
        page.get_by_role("button", name="Continue").click()
        expect(page.locator(".composer")).to_be_visible()
        assert re.fullmatch(r".*#/chat/s_[0-9a-f]{16}", page.url)
        # The saved session's own events, as the Sessions view showed them, then the
        # agent's replay of them, collapsed.
        expect(page.locator("section.history .history-events > *")).to_have_count(len(as_saved))
        assert shown(page, "section.history .history-events > *") == as_saved
        expect(page.locator(".session-title")).to_have_text(title or "")
        replay = page.locator("details.replay")
        assert replay.evaluate("(d) => d.open") is False
        assert replay.locator(".user .text").all_text_contents() == ["earlier"]
        assert replay.locator(".answer .text").all_text_contents() == ["an earlier answer"]
        page.get_by_label("Message").fill("and now?")
        page.get_by_label("Message").press("Enter")
        expect(page.locator(".turn").last).to_have_text(DONE)
        assert page.locator(".stream > .answer .text").all_text_contents() == ["re: and now?"]
        # A reload shows the same: the history once, the replay collapsed, the new turn.
        before = shown(page, ".stream > *")
        page.reload()
        expect(page.locator("section.history")).to_have_count(1)
        expect(page.locator(".stream > .answer .text")).to_have_text(["re: and now?"])
        assert shown(page, ".stream > *") == before
        sid = page.url.rsplit("/", 1)[1]
        view = page.evaluate(f"fetch('/v1/sessions/{sid}').then(r => r.json())")
        assert watched.problems == []
    assert [(p["sessionId"], p["cwd"]) for p in LOADED] == [(saved[1], str(run.workspace))]
    assert (view["agent"], view["agent_session_id"]) == ("gemini", saved[1])
