"""``gemwire agent antigravity``, the real harness (google-antigravity 0.1.22, the
``antigravity`` extra) against the scripted model, offline, driven as any ACP client drives it.

One adapter process serves most tests, each in a session of its own with its own workspace
(the scripted model's answers are picked by each case's prompt, ``when``); the frames of each
are kept in tests/fixtures/acp/antigravity/<case>.frames (re-record: ``GEMWIRE_RECORD=1``).
The model's text and its tool calls come in separate answers: the harness asks about a call
as soon as the model names it, concurrently with the text before it, so their order in one
answer is the harness's to choose.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from gemwire.testing import (
    Fail,
    FunctionCall,
    Hang,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    Thought,
    Turn,
)
from gemwire.testing.agents import IsolatedAntigravity
from gemwire.testing.recorder import MachinePaths

pytest.importorskip("google.antigravity", reason="make test installs gemwire[antigravity]")

pytestmark = [pytest.mark.e2e]

RECORD = os.environ.get("GEMWIRE_RECORD") == "1"
FRAMES = Path(__file__).parents[2] / "fixtures" / "acp" / "antigravity"
GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
LONGEST = 120.0
"""How long a frame may take before the test fails (a hung adapter fails, never hangs)."""

Update = dict[str, Any]
INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    },
}
"""A client that offers no files and no terminals (the harness runs its own tools)."""


class AgentPipe:
    def __init__(self, env: dict[str, str], cwd: Path, stderr: IO[bytes]) -> None:
        self.process = subprocess.Popen(
            [GEMWIRE, "agent", "antigravity"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=cwd,
        )
        self.frames: list[str] = []
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._ids = iter(range(1 << 30))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":"))
        self.frames.append(f"> {line}")
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self._lines.get(timeout=LONGEST)
        assert line, f"the adapter closed its stdout (exit {self.process.poll()})"
        self.frames.append(f"< {line.decode().rstrip()}")
        return json.loads(line)  # type: ignore[no-any-return]

    def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        permit: Callable[[dict[str, Any]], str | None] | None = None,
        on_update: Callable[[Update], None] | None = None,
    ) -> tuple[dict[str, Any], list[Update]]:
        """Sends a request; returns its response and the ``session/update`` updates before
        it. ``permit`` answers each permission request with an option id (``None``:
        cancelled); ``on_update`` sees each update as it comes."""
        request_id = next(self._ids)
        self.send({"id": request_id, "method": method, "params": params})
        updates: list[Update] = []
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message, updates
            if message.get("method") == "session/update":
                updates.append(message["params"]["update"])
                if on_update is not None:
                    on_update(message["params"]["update"])
            elif message.get("method") == "session/request_permission":
                assert permit is not None, f"unexpected permission request: {message}"
                option = permit(message["params"])
                outcome = (
                    {"outcome": "cancelled"}
                    if option is None
                    else {"outcome": "selected", "optionId": option}
                )
                self.send({"id": message["id"], "result": {"outcome": outcome}})
            else:
                raise AssertionError(f"unexpected message: {message}")

    def result(self, method: str, params: dict[str, Any], **kwargs: Any) -> Any:
        response, updates = self.request(method, params, **kwargs)
        assert "result" in response, response
        assert updates == [], updates
        return response["result"]

    def close(self) -> int:
        """Closes stdin (the client goes away) and waits for the adapter to exit."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=LONGEST)
        self._reader.join(LONGEST)  # it reads to the end of stdout, then stops
        self.process.stdout.close()
        return code


SAYS = {"toolSummary": "a step", "toolAction": "Working"}
"""What Antigravity declares required of every tool besides its own arguments."""
SEED = {"a.txt": "old line\n"}
MACHINE = MachinePaths()


def write(w: Path) -> FunctionCall:
    args = {"TargetFile": str(w / "hello.txt"), "CodeContent": "hi there\n", "Overwrite": False}
    return FunctionCall("write_to_file", {**args, "Description": "a greeting", **SAYS})


def edit(w: Path) -> FunctionCall:
    args = {"TargetFile": str(w / "a.txt"), "TargetContent": "old", "ReplacementContent": "new"}
    lines = {"StartLine": 1, "EndLine": 1, "AllowMultiple": False}
    return FunctionCall(
        "replace_file_content", {**args, **lines, "Instruction": "i", "Description": "d", **SAYS}
    )


def shell(w: Path) -> FunctionCall:
    args = {"CommandLine": "touch made.txt", "Cwd": str(w), "WaitMsBeforeAsync": 5000}
    return FunctionCall("run_command", {**args, **SAYS})


TOOLS = {"write": write, "edit": edit, "shell": shell}
AFTER = {
    "write": {**SEED, "hello.txt": "hi there\n"},
    "edit": {"a.txt": "new line\n"},
    "shell": {**SEED, "made.txt": ""},
}


def replies(root: Path) -> list[Turn]:
    """Every case's answers, each served only to its own case's prompt (and its later
    turns, whose requests hold it)."""
    turns: list[Turn] = [
        Reply([Thought("Let me think."), Text("Hello there.")], when="case-answer")
    ]
    for tool, call in TOOLS.items():
        for answer in ("allow", "deny"):
            case = f"case-{tool}-{answer}"
            turns += [Reply([call(root / case)], when=case), Reply([Text("Done.")], when=case)]
    turns += [
        Reply([Text("Working on it"), Hang()], when="case-cancel"),
        Reply([Text("Back.")], when="case-cancel"),
        Reply([Text("One.")], when="case-two"),
        Reply([Text("Two.")], when="case-two"),
        Fail(status=400, message="Bad prompt.", when="case-fail"),
        Reply([Text("Back after the error.")], when="case-fail", repeat=2),
        Reply([write(root / "case-modes")], when="case-modes"),
        Reply([Text("Refused.")], when="case-modes"),
        Reply([shell(root / "case-modes")], when="case-modes"),
        Reply([Text("Ran.")], when="case-modes"),
        Reply([Text("On another model.")], when="case-modes"),
        Fail(status=503, when="case-retry"),
        Fail(status=429, retry_delay=0, when="case-retry"),
        Reply([Text("Third time.")], when="case-retry"),
    ]
    return turns


class Shared:
    """The adapter process the tests share, its home and the scripted model."""

    def __init__(self, root: Path, model: ScriptedModel, env: IsolatedAntigravity) -> None:
        self.root = root
        self.model = model
        self.env = env
        self.stderr = (root / "stderr.log").open("wb")
        self.pipe = AgentPipe(env.environ(), root, self.stderr)
        self.initialized = self.pipe.result("initialize", INITIALIZE)
        self.opened = len(self.pipe.frames)

    def session(self, case: str, files: dict[str, str] | None = None) -> tuple[str, Path]:
        """A new session in a workspace of the case's own: its id and its folder."""
        workspace = self.root / case
        workspace.mkdir()
        for name, text in (SEED if files is None else files).items():
            (workspace / name).write_text(text)
        self.start = len(self.pipe.frames)
        new = self.pipe.result("session/new", {"cwd": str(workspace), "mcpServers": []})
        return new["sessionId"], workspace

    def keep_frames(self, case: str) -> None:
        """Re-recording: the case's frames, machine paths and ids replaced."""
        if RECORD:
            FRAMES.mkdir(parents=True, exist_ok=True)
            # The handshake too: every case's file holds what its session's frames answer to.
            frames = self.pipe.frames[: self.opened] + self.pipe.frames[self.start :]
            text = "\n".join(frames) + "\n"
            (FRAMES / f"{case}.frames").write_text(scrub(text, self.root))


def scrub(text: str, root: Path) -> str:
    text = MACHINE.scrub(text, lambda name: f"{{{name}}}", [(str(root), "{root}")])
    return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{uuid}", text)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    root = tmp_path_factory.mktemp("antigravity").resolve()
    with ScriptedModel(Scenario(turns=replies(root))) as model:
        env = IsolatedAntigravity(model, root=root / "env")
        adapter = Shared(root, model, env)
        try:
            yield adapter
        finally:
            code = adapter.pipe.close()
            adapter.stderr.close()
        assert code == 0, (root / "stderr.log").read_text()
        assert env.live_processes() == []
        assert model.problems == []


def kinds(updates: list[Update]) -> list[tuple[str, ...]]:
    """Each update but usage as (kind, text) or (kind, call id, status); usage apart."""
    said: list[tuple[str, ...]] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            said.append((kind, update["content"]["text"]))
        elif kind in ("tool_call", "tool_call_update"):
            said.append((kind, update["toolCallId"], update["status"]))
        else:
            assert kind == "usage_update", update
    return said


def used(updates: list[Update]) -> int:
    return sum(u["used"] for u in updates if u["sessionUpdate"] == "usage_update")


def files_in(workspace: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(workspace.iterdir()) if p.is_file()}


def test_initialize_says_what_the_adapter_offers(shared: Shared) -> None:
    assert shared.initialized == {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"embeddedContext": True},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
        },
        "authMethods": [
            {
                "id": "gemini-api-key",
                "name": "Gemini API key",
                "description": "Set GEMINI_API_KEY (or GOOGLE_API_KEY) in the agent's environment",
            }
        ],
        "agentInfo": {
            "name": "antigravity",
            "title": "Antigravity (gemwire)",
            "version": shared.initialized["agentInfo"]["version"],
        },
    }


def test_text_with_a_thought(shared: Shared) -> None:
    session, _ = shared.session("answer")
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "case-answer"}]}
    response, updates = shared.pipe.request("session/prompt", prompt)
    shared.keep_frames("answer")
    assert kinds(updates) == [
        ("agent_thought_chunk", "Let me think."),
        ("agent_message_chunk", "Hello there."),
    ]
    usage = {"totalTokens": 110, "inputTokens": 100, "outputTokens": 10}
    usage |= {"thoughtTokens": 0, "cachedReadTokens": 0}
    assert response["result"] == {"stopReason": "end_turn", "usage": usage}
    assert used(updates) == 110
    # The test kit's environment takes the model's network tools away.
    [request] = [r for r in shared.model.requests if "case-answer" in json.dumps(r.body)]
    declared = {d["name"] for t in request.body["tools"] for d in t["functionDeclarations"]}
    assert "run_command" in declared
    assert declared.isdisjoint({"read_url_content", "search_web"})


@pytest.mark.parametrize("answer", ["allow", "deny"])
@pytest.mark.parametrize("tool", list(TOOLS))
def test_a_tool_call_asked_and_answered(shared: Shared, tool: str, answer: str) -> None:
    case = f"{tool}-{answer}"
    session, workspace = shared.session(f"case-{case}")
    asked: list[dict[str, Any]] = []

    def permit(request: dict[str, Any]) -> str:
        asked.append(request)
        assert files_in(workspace) == SEED  # nothing runs before the answer
        return "allow_once" if answer == "allow" else "reject_once"

    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": f"case-{case}"}]}
    response, updates = shared.pipe.request("session/prompt", prompt, permit=permit)
    shared.keep_frames(case)
    assert response["result"]["stopReason"] == "end_turn"
    ran = ("tool_call_update", "call-1", "in_progress")
    ended = ("tool_call_update", "call-1", "completed" if answer == "allow" else "failed")
    assert kinds(updates) == [
        ("tool_call", "call-1", "pending"),
        *([ran] if answer == "allow" else []),
        ended,
        ("agent_message_chunk", "Done."),
    ]
    [request] = asked
    call = updates[0]
    assert request["sessionId"] == session
    assert request["toolCall"] == {k: v for k, v in call.items() if k != "sessionUpdate"}
    assert [o["kind"] for o in request["options"]] == ["allow_once", "allow_always", "reject_once"]
    target = str(workspace / ("a.txt" if tool == "edit" else "hello.txt"))
    expected = {
        "write": ("edit", f"Write {target}", [{"type": "diff", "path": target, "newText": "hi there\n"}]),
        "edit": ("edit", f"Edit {target}", [{"type": "diff", "path": target, "oldText": "old", "newText": "new"}]),
        "shell": ("execute", "touch made.txt", None),
    }[tool]  # fmt: skip
    assert (call["kind"], call["title"], call.get("content")) == expected
    assert call.get("locations") == (None if tool == "shell" else [{"path": target}])
    finished = [u for u in updates if u["sessionUpdate"] != "usage_update"][-2]
    if answer == "deny":
        assert finished["content"] == [
            {"type": "content", "content": {"type": "text", "text": "Denied by the user."}}
        ]
        assert files_in(workspace) == SEED
        # The denial reaches the model as the tool's error.
        last = json.dumps(shared.model.requests[-1].body)
        assert "denied" in last.lower()
    else:
        assert files_in(workspace) == AFTER[tool]
        done = {
            "write": [{"type": "diff", "path": target, "newText": "hi there\n"}],
            "edit": [{"type": "diff", "path": target, "oldText": "old line\n", "newText": "new line\n"}],
            "shell": None,
        }[tool]  # fmt: skip
        assert finished.get("content") == done
        if tool == "shell":
            assert finished["rawOutput"] == {
                "command_line": "touch made.txt",
                "working_dir": str(workspace),
                "exit_code": 0,
                "combined_output": "",
            }


def test_cancel_mid_turn_then_the_next_turn(shared: Shared) -> None:
    session, workspace = shared.session("case-cancel")

    def cancel_on_text(update: Update) -> None:
        if update["sessionUpdate"] == "agent_message_chunk":
            shared.pipe.send({"method": "session/cancel", "params": {"sessionId": session}})

    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "case-cancel"}]}
    response, updates = shared.pipe.request("session/prompt", prompt, on_update=cancel_on_text)
    assert response["result"]["stopReason"] == "cancelled"
    assert kinds(updates) == [("agent_message_chunk", "Working on it")]
    again = {"sessionId": session, "prompt": [{"type": "text", "text": "and now?"}]}
    response, updates = shared.pipe.request("session/prompt", again)
    shared.keep_frames("cancel")
    assert response["result"]["stopReason"] == "end_turn"
    assert kinds(updates) == [("agent_message_chunk", "Back.")]
    assert files_in(workspace) == SEED


def test_two_turns_the_second_knows_the_first(shared: Shared) -> None:
    session, _ = shared.session("case-two")
    answers = []
    for text in ("case-two", "and the second?"):
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
        response, updates = shared.pipe.request("session/prompt", prompt)
        assert response["result"]["stopReason"] == "end_turn"
        answers.append(kinds(updates))
    shared.keep_frames("two_turns")
    assert answers == [[("agent_message_chunk", "One.")], [("agent_message_chunk", "Two.")]]
    second = json.dumps(shared.model.requests[-1].body)
    assert "case-two" in second
    assert "One." in second


def test_a_model_error_fails_the_prompt(shared: Shared) -> None:
    session, _ = shared.session("case-fail")
    response, updates = shared.pipe.request("session/prompt", prompt_of(session, "case-fail"))
    shared.keep_frames("model_error")
    said = "Error 400, Message: Bad prompt., Status: INVALID_ARGUMENT, Details: []"
    assert response["error"] == {
        "code": -32603,
        "message": "Antigravity's harness failed: Agent execution terminated due to error. "
        f'("agent executor error: {said}: {said}")',
    }
    assert updates == []
    asked = [r for r in shared.model.requests if "case-fail" in json.dumps(r.body)]
    assert len(asked) == 1  # a 400 is not retried
    # The harness ends its connection after a failed turn: the session goes on in a new one,
    # resumed from its database (the next prompt got nothing, the one after hung for ever).
    for text in ("and now?", "and again?"):
        response, updates = shared.pipe.request("session/prompt", prompt_of(session, text))
        assert response["result"]["stopReason"] == "end_turn", response
        assert kinds(updates)[-1] == ("agent_message_chunk", "Back after the error.")
    assert "and again?" in json.dumps(shared.model.requests[-1].body)


def test_a_503_and_a_429_are_retried_by_the_harness(shared: Shared) -> None:
    session, _ = shared.session("case-retry")
    response, updates = shared.pipe.request("session/prompt", prompt_of(session, "case-retry"))
    shared.keep_frames("retried")
    assert response["result"]["stopReason"] == "end_turn"
    assert kinds(updates) == [("agent_message_chunk", "Third time.")]
    asked = [r for r in shared.model.requests if "case-retry" in json.dumps(r.body)]
    assert len(asked) == 3


def test_modes_decide_without_asking_and_a_model_change_keeps_the_conversation(
    shared: Shared,
) -> None:
    session, workspace = shared.session("case-modes")
    pipe = shared.pipe
    bad = pipe.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})[0]
    assert bad["error"] == {"code": -32602, "message": "no mode 'yolo'"}
    assert pipe.result("session/set_mode", {"sessionId": session, "modeId": "read_only"}) == {}
    response, updates = pipe.request("session/prompt", prompt_of(session, "case-modes"))
    assert response["result"]["stopReason"] == "end_turn"
    assert kinds(updates) == [
        ("tool_call", "call-1", "pending"),
        ("tool_call_update", "call-1", "failed"),
        ("agent_message_chunk", "Refused."),
    ]
    assert files_in(workspace) == SEED
    assert pipe.result("session/set_mode", {"sessionId": session, "modeId": "allow_all"}) == {}
    response, updates = pipe.request("session/prompt", prompt_of(session, "now run it"))
    assert response["result"]["stopReason"] == "end_turn"
    said = kinds(updates)
    assert [u[0] for u in said] == ["tool_call", "tool_call_update", "agent_message_chunk"]
    assert said[1][2] == "completed"
    assert files_in(workspace) == {**SEED, "made.txt": ""}
    change = {"sessionId": session, "modelId": "gemini-other"}
    assert pipe.result("session/set_model", change) == {}
    response, updates = pipe.request("session/prompt", prompt_of(session, "and now?"))
    shared.keep_frames("modes")
    assert response["result"]["stopReason"] == "end_turn"
    assert kinds(updates) == [("agent_message_chunk", "On another model.")]
    last = shared.model.requests[-1]
    assert last.path == "/v1beta/models/gemini-other:streamGenerateContent"
    assert "Refused." in json.dumps(last.body)  # the same conversation, resumed


def prompt_of(session: str, text: str) -> dict[str, Any]:
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


def test_a_session_outlives_its_process_resumed_listed_and_loaded(tmp_path: Path) -> None:
    """A session resumed by the next adapter (the model gets the first turn again), listed
    with its folder and first prompt, and loaded (its turns replayed); SIGTERM and a killed
    adapter each leave no harness behind."""
    turns: list[Turn] = [Reply([Text(text)], when="case-resume") for text in ("Saved.", "Resumed.")]
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with ScriptedModel(Scenario(turns=turns)) as model, (tmp_path / "err").open("wb") as err:
        env = IsolatedAntigravity(model, root=tmp_path / "env")
        first = AgentPipe(env.environ(), workspace, err)
        first.result("initialize", INITIALIZE)
        new = first.result("session/new", {"cwd": str(workspace), "mcpServers": []})
        session = new["sessionId"]
        assert new["modes"]["currentModeId"] == "default"
        response, _ = first.request("session/prompt", prompt_of(session, "case-resume"))
        assert response["result"]["stopReason"] == "end_turn"
        assert first.close() == 0
        assert env.live_processes() == []

        second = AgentPipe(env.environ(), workspace, err)
        second.result("initialize", INITIALIZE)
        [listed] = second.result("session/list", {"cwd": str(workspace)})["sessions"]
        assert {k: listed[k] for k in ("sessionId", "cwd", "title")} == {
            "sessionId": session,
            "cwd": str(workspace),
            "title": "case-resume",
        }
        assert second.result("session/list", {"cwd": str(tmp_path)}) == {"sessions": []}
        opened = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        assert second.result("session/resume", opened)["modes"] == new["modes"]
        response, updates = second.request("session/prompt", prompt_of(session, "again?"))
        assert kinds(updates) == [("agent_message_chunk", "Resumed.")]
        resumed = json.dumps(model.requests[-1].body)
        assert "case-resume" in resumed
        assert "Saved." in resumed
        second.process.send_signal(signal.SIGTERM)
        assert second.close() == 0
        assert env.live_processes() == []

        third = AgentPipe(env.environ(), workspace, err)
        third.result("initialize", INITIALIZE)
        response, replay = third.request("session/load", opened)
        assert "result" in response, response
        assert kinds(replay) == [
            ("user_message_chunk", "case-resume"),
            ("agent_message_chunk", "Saved."),
            ("user_message_chunk", "again?"),
            ("agent_message_chunk", "Resumed."),
        ]
        third.process.kill()  # the client's end dies with it: the harness must notice
        third.close()
        assert env.live_processes() == []
        assert model.problems == []


def test_the_acp_python_sdk_drives_it_through_a_turn_with_a_permission(tmp_path: Path) -> None:
    """An ACP client we did not write (the ACP Python SDK's) over stdio."""
    import anyio
    from acp import spawn_agent_process, text_block
    from acp.interfaces import Client
    from acp.schema import AllowedOutcome, RequestPermissionResponse, ToolCallUpdate

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    turns: list[Turn] = [Reply([write(workspace)]), Reply([Text("Written.")])]

    class Allowing(Client):
        def __init__(self) -> None:
            self.asked: list[str] = []
            self.texts: list[str] = []

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            if getattr(update, "session_update", None) == "agent_message_chunk":
                self.texts.append(update.content.text)

        async def request_permission(
            self, session_id: str, tool_call: ToolCallUpdate, options: Any, **kwargs: Any
        ) -> RequestPermissionResponse:
            self.asked.append(str(tool_call.title))
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
            )

    async def turn(env: IsolatedAntigravity) -> tuple[str, str]:
        client = Allowing()  # type: ignore[abstract]  # the SDK Protocol; unused methods
        agent = spawn_agent_process(client, GEMWIRE, "agent", "antigravity", env=env.environ())
        async with agent as (connection, process):
            with anyio.fail_after(LONGEST):
                init = await connection.initialize(protocol_version=1)
                session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
                result = await connection.prompt(
                    session_id=session.session_id, prompt=[text_block("write it")]
                )
        await process.wait()
        assert client.asked == [f"Write {workspace / 'hello.txt'}"]
        assert client.texts == ["Written."]
        assert init.agent_info is not None
        return init.agent_info.name, result.stop_reason

    with ScriptedModel(Scenario(turns=turns)) as model:
        env = IsolatedAntigravity(model, root=tmp_path / "env")
        assert anyio.run(turn, env, backend="asyncio") == ("antigravity", "end_turn")
        assert env.live_processes() == []
        assert model.problems == []
    assert (workspace / "hello.txt").read_text() == "hi there\n"


def test_gemwire_acp_runs_it_by_name(tmp_path: Path) -> None:
    """The built-in agent: found without being on PATH (beside the running Python)."""
    with ScriptedModel(Scenario(turns=[Reply([Text("Hi from Antigravity.")])])) as model:
        env = IsolatedAntigravity(model, root=tmp_path)
        environ = env.environ()
        environ["PATH"] = os.defpath  # no gemwire on it
        argv = [GEMWIRE, "acp", "--agent", "antigravity", "--json", "--cwd", str(env.workspace)]
        done = subprocess.run(
            [*argv, "hello"], check=False, env=environ, capture_output=True, timeout=LONGEST
        )
        assert env.live_processes() == []
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout.splitlines()[-1])
    assert {k: last[k] for k in ("type", "ok", "answer", "agent")} == {
        "type": "turn_completed",
        "ok": True,
        "answer": "Hi from Antigravity.",
        "agent": "acp:antigravity",
    }
    assert model.problems == []
