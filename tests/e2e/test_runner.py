"""run_gemini against the real Gemini CLI 0.61.0 and the scripted model."""

from __future__ import annotations

import math
import time
from pathlib import Path

import anyio
import msgspec
import pytest
from kit.budget import load

from gemwire import GeminiOptions, RunResult, run_gemini, run_gemini_sync
from gemwire.errors import (
    AuthFailed,
    GeminiNotFound,
    GemwireError,
    InvalidOptions,
    PromptTooLarge,
    RunTimedOut,
    UntrustedWorkspace,
)
from gemwire.events import Event, FileChanged, Notice, TurnCompleted, TurnError, UserMessage
from gemwire.testing import (
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Hang,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# The lifecycle tests also run on trio; the rest on asyncio only (tests/e2e/conftest.py).
BOTH_BACKENDS = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


async def run(
    scenario: Scenario,
    prompt: str,
    tmp_path: Path,
    *,
    settings: dict[str, object] | None = None,
    stop_at: str | None = None,
    env_changes: dict[str, str | None] | None = None,
    **options: object,
) -> tuple[list[Event], RunResult, IsolatedGemini, ScriptedModel]:
    """Run the prompt; with ``stop_at``, leave the run at the first event of that type."""
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files, settings=settings, root=tmp_path)
        environ = env.environ()
        for key, value in (env_changes or {}).items():
            if value is None:
                environ.pop(key, None)
            else:
                environ[key] = value
        opts = env.gemini_options(env=environ, **options)
        events: list[Event] = []
        async with run_gemini(prompt, opts) as handle:
            async for event in handle:
                events.append(event)
                if event.type == stop_at:
                    break
        return events, handle.result, env, model


@BOTH_BACKENDS
async def test_a_multi_tool_run(tmp_path: Path) -> None:
    scenario = Scenario(
        files={"old.txt": "old\n"},
        turns=[
            Reply(
                [
                    Text("Writing."),
                    FunctionCalls(
                        [
                            FunctionCall(
                                "write_file", {"file_path": "new.txt", "content": "new\n"}
                            ),
                            FunctionCall(
                                "replace",
                                {
                                    "file_path": "old.txt",
                                    "instruction": "i",
                                    "old_string": "old",
                                    "new_string": "changed",
                                },
                            ),
                        ]
                    ),
                ]
            ),
            Reply([FunctionCall("run_shell_command", {"command": "cat new.txt old.txt"})]),
            Reply([Text("All done.")]),
        ],
    )
    events, result, env, model = await run(
        scenario, "edit the files", tmp_path, approval_mode="yolo"
    )
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "message_delta",
        "tool_call_started",
        "tool_call_started",
        "tool_call_finished",
        "file_changed",
        "tool_call_finished",
        "file_changed",
        "tool_call_started",
        "tool_call_finished",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    assert (result.ok, result.stop_reason, result.error, result.exit_code) == (
        True,
        "end_turn",
        None,
        0,
    )
    assert result.answer == "Writing.\n\nAll done."
    workspace = str(env.workspace)
    assert [(f.path, f.change) for f in result.files_changed] == [
        (f"{workspace}/new.txt", "written"),
        (f"{workspace}/old.txt", "modified"),
    ]
    assert (env.workspace / "old.txt").read_text() == "changed\n"
    assert result.session_id == events[0].session_id
    assert result.resume is not None
    assert result.resume.command == f"gemini --resume {result.session_id}"
    assert result.usage is not None
    assert result.usage.total_tokens == 3 * 110 + 2  # three model turns + the router call
    assert result.executable.version == "0.61.0"
    assert env.live_processes() == []
    assert model.problems == []


async def test_no_api_key_fails_before_any_event_as_auth(tmp_path: Path) -> None:
    events, result, _, model = await run(
        Scenario(turns=[]), "hi", tmp_path, env_changes={"GEMINI_API_KEY": None}
    )
    assert [e.type for e in events] == ["turn_completed"]
    assert result.error == TurnError(  # Gemini CLI's own words, from its stderr
        kind="auth",
        message="When using Gemini API, you must specify the GEMINI_API_KEY environment "
        "variable.\nUpdate your environment and try again (no reload needed if using .env)!",
        exit_code=41,
    )
    assert "GEMINI_API_KEY" in result.stderr_tail
    with pytest.raises(AuthFailed) as caught:
        result.raise_for_error()
    assert caught.value.exit_code == 41
    assert caught.value.result is result
    assert model.requests == []


async def test_an_untrusted_folder(tmp_path: Path) -> None:
    _, result, _, _ = await run(
        Scenario(turns=[]), "hi", tmp_path, env_changes={"GEMINI_CLI_TRUST_WORKSPACE": None}
    )
    assert (result.error.kind if result.error else None, result.exit_code) == ("untrusted", 55)
    with pytest.raises(UntrustedWorkspace):
        result.raise_for_error()


async def test_a_wrong_key_is_auth_and_keeps_the_session(tmp_path: Path) -> None:
    _, result, _, _ = await run(Scenario(turns=[], api_key="the-real-one"), "hi", tmp_path)
    assert result.error is not None
    assert (result.error.kind, result.error.exit_code) == ("auth", 144)
    assert result.session_id is not None


@BOTH_BACKENDS
async def test_a_hanging_model_times_out_and_nothing_is_left(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text("partial "), Hang()])])
    # Long enough for the CLI to start and say "partial " first: 6 s on the budget's idle
    # machine, more on a loaded one (under a load of 10 a core it had not yet said it).
    limit = math.ceil(6 * max(1.0, load()))
    events, result, env, _ = await run(scenario, "hi", tmp_path, timeout=limit)
    assert events[-1] == TurnCompleted(
        agent="gemini",
        session_id=result.session_id,
        ok=False,
        stop_reason="error",
        error=TurnError(
            kind="timeout",
            message=f"the run took longer than {limit} s",
            exit_code=result.exit_code,
        ),
        answer="partial ",
    )
    assert result.exit_code is not None
    assert result.duration_s < limit + 2 + 3  # the deadline, the TERM grace, slack
    assert env.live_processes() == []
    with pytest.raises(RunTimedOut):
        result.raise_for_error()


async def test_idle_timeout(tmp_path: Path) -> None:
    _, result, env, _ = await run(Scenario(turns=[Reply([Hang()])]), "hi", tmp_path, idle_timeout=4)
    assert result.error == TurnError(
        kind="timeout", message="no output for 4 s", exit_code=result.exit_code
    )
    assert env.live_processes() == []


@BOTH_BACKENDS
async def test_leaving_during_a_long_shell_command_stops_everything(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("run_shell_command", {"command": "sleep 600"})]),
            Reply([Text("never")]),
        ]
    )
    events, result, env, _ = await run(
        scenario, "wait", tmp_path, approval_mode="yolo", stop_at="tool_call_started"
    )
    assert events[-1].type == "tool_call_started"
    assert result.error is not None
    assert (result.ok, result.error.kind, result.stop_reason) == (False, "cancelled", "cancelled")
    assert env.live_processes() == []


async def test_max_tool_calls_stops_the_run(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("list_directory", {"dir_path": "."})], repeat=5),
            Reply([Text("x")]),
        ]
    )
    events, result, env, _ = await run(scenario, "list", tmp_path, max_tool_calls=2)
    assert sum(e.type == "tool_call_started" for e in events) == 3
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "cancelled",
        "more than 2 tool calls (max_tool_calls)",
    )
    assert events[-1].type == "turn_completed"
    assert env.live_processes() == []


async def test_max_model_turns_stops_the_run(tmp_path: Path) -> None:
    ls = FunctionCall("list_directory", {"dir_path": "."})
    scenario = Scenario(
        turns=[
            Reply([Text("Looking."), FunctionCalls([ls, ls])]),
            Reply([ls]),
            Reply(
                [Text("Still looking."), FunctionCall("run_shell_command", {"command": "sleep 60"})]
            ),
            Reply([Text("never reached")]),
        ]
    )
    events, result, env, model = await run(
        scenario, "list", tmp_path, max_model_turns=2, approval_mode="yolo"
    )
    # Turns 1 (text + two calls) and 2 (one call) run; turn 3's text stops the run.
    assert [e.type for e in events if e.type.startswith("tool_call")][:6] == [
        "tool_call_started",
        "tool_call_started",
        "tool_call_finished",
        "tool_call_finished",
        "tool_call_started",
        "tool_call_finished",
    ]
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "cancelled",
        "more than 2 model turns (max_model_turns)",
    )
    assert result.stop_reason == "cancelled"
    assert result.answer == "Looking.\n\nStill looking."
    assert [r.turn for r in model.requests if r.rpc == "streamGenerateContent"] == [0, 1, 2]
    assert env.live_processes() == []


async def test_429_retries_show_as_notices_and_the_run_succeeds(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[Fail(429, retry_delay=1, quota_id="PerMinute"), Reply([Text("Hello.")])]
    )
    events, result, _, _ = await run(scenario, "hi", tmp_path)
    retries = [e for e in events if isinstance(e, Notice) and e.source == "stderr"]
    assert [n.message for n in retries] == [
        "Attempt 1 failed: Resource has been exhausted (e.g. check quota)."
    ]
    assert events.index(retries[0]) < len(events) - 1
    assert (result.ok, result.answer) == (True, "Hello.")


async def test_fail_fast_on_rate_limits(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Fail(429, retry_delay=1, quota_id="PerMinute", repeat=10)])
    _, result, env, model = await run(scenario, "hi", tmp_path, max_rate_limit_retries=0)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == (
        "rate_limited",
        "rate limited; gave up after 0 retries",
    )
    # Not the CLI's ten attempts with backoff: counted, not timed (a loaded machine is slow).
    attempts = [r for r in model.requests if r.rpc == "streamGenerateContent"]
    assert 1 <= len(attempts) < 10
    assert env.live_processes() == []


async def test_resume_continues_the_same_session(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text("I will remember 7.")]), Reply([Text("It was 7.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        base = env.gemini_options()
        first = await anyio.to_thread.run_sync(run_gemini_sync, "remember the number 7", base)
        resumed = msgspec.structs.replace(base, resume="latest")
        second = await anyio.to_thread.run_sync(run_gemini_sync, "which number?", resumed)
    assert first.ok
    assert second.ok
    assert second.session_id == first.session_id
    assert second.answer == "It was 7."
    assert "remember the number 7" in model.requests[-1].texts()


async def test_json_output_format_gives_the_same_result(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply(
                [
                    Text("Writing."),
                    FunctionCall("write_file", {"file_path": "hi.txt", "content": "hi\n"}),
                ]
            ),
            Reply([Text("Done.")]),
        ]
    )
    events, result, env, model = await run(
        scenario, "write hi.txt", tmp_path, approval_mode="yolo", output_format="json"
    )
    assert [e.type for e in events] == [
        "session_started",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    assert (result.ok, result.stop_reason, result.error, result.exit_code) == (
        True,
        "end_turn",
        None,
        0,
    )
    assert result.answer == "Done."  # the json format keeps only the last model turn's text
    assert result.files_changed == []  # ... and reports no tool calls
    assert (env.workspace / "hi.txt").read_text() == "hi\n"
    assert result.session_id == events[0].session_id is not None
    assert result.usage is not None
    assert result.usage.total_tokens == 2 * 110 + 2  # two model turns + the router call
    assert env.live_processes() == []
    assert model.problems == []


async def test_json_output_format_reads_fatal_errors_from_stderr(tmp_path: Path) -> None:
    events, result, _, _ = await run(
        Scenario(turns=[], api_key="the-real-one"), "hi", tmp_path, output_format="json"
    )
    assert [e.type for e in events] == ["session_started", "turn_completed"]
    assert result.error is not None
    assert (result.error.kind, result.error.exit_code) == ("auth", 144)
    assert "API key not valid" in result.error.message
    assert result.session_id == events[0].session_id is not None


def test_json_output_format_refuses_what_it_cannot_watch() -> None:
    for budget in ({"idle_timeout": 5.0}, {"max_tool_calls": 0}, {"max_model_turns": 1}):
        options = GeminiOptions(output_format="json", executable=str(pinned_gemini()), **budget)
        with pytest.raises(InvalidOptions, match="cannot work together: the json format"):
            run_gemini_sync("hi", options)


def test_refusals_before_starting_anything(tmp_path: Path) -> None:
    with pytest.raises(GeminiNotFound, match="is not an executable file"):
        run_gemini_sync("hi", GeminiOptions(executable=str(tmp_path / "gemini")))
    with pytest.raises(PromptTooLarge, match="reads at most 8388608"):
        run_gemini_sync("x" * (8 * 1024 * 1024 + 1), GeminiOptions(executable=str(pinned_gemini())))


def test_files_changed_are_file_changed_events() -> None:
    assert FileChanged.__struct_config__.tag == "file_changed"


def test_the_adr_0014_provider_shape(tmp_path: Path) -> None:
    from gemwire.adapters import GeminiCliProvider, ProviderResult

    scenario = Scenario(
        turns=[
            Reply([FunctionCall("write_file", {"file_path": "out.txt", "content": "x\n"})]),
            Reply([Text("Wrote out.txt.")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        provider = GeminiCliProvider(
            {"working_dir": str(env.workspace), "executable": str(pinned_gemini()), "timeout": 60}
        )
        provider.validate()
        provider.options = msgspec.structs.replace(provider.options, env=env.environ())
        result = provider.generate("write out.txt")
    assert result == ProviderResult(
        response="Wrote out.txt.", files={f"{env.workspace}/out.txt": None}
    )
    assert GeminiCliProvider.get_metadata()["fs_ability"] == "local-write"
    with pytest.raises(GemwireError, match=r"unknown config key\(s\) \['budget'\]"):
        GeminiCliProvider({"budget": 1})
    with pytest.raises(GeminiNotFound):
        GeminiCliProvider({"executable": str(tmp_path / "none")}).validate()


async def test_runs_of_one_session_queue_and_other_sessions_run_alongside(tmp_path: Path) -> None:
    # Each answer takes 2 s: the run ahead lasts well past the other session's CLI start-up,
    # which on a loaded 2-core machine came 0.4 s after an instant answer.
    with ScriptedModel(Scenario(turns=[Reply([Delay(2), Text("ok")], repeat=10)])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        base = env.gemini_options()
        first = await anyio.to_thread.run_sync(run_gemini_sync, "start a session", base)
        assert first.session_id is not None
        # name -> (time of session_started, time of turn_completed, events)
        spans: dict[str, tuple[float, float, list[Event]]] = {}

        async def timed(name: str, options: GeminiOptions) -> None:
            seen: list[tuple[float, Event]] = []
            async with run_gemini(f"prompt {name}", options) as handle:
                seen = [(time.monotonic(), event) async for event in handle]
            started = next(t for t, e in seen if e.type == "session_started")
            spans[name] = (started, seen[-1][0], [e for _, e in seen])

        resume = msgspec.structs.replace(base, resume=first.session_id)
        async with anyio.create_task_group() as tg:
            tg.start_soon(timed, "b", resume)
            tg.start_soon(timed, "c", resume)
            tg.start_soon(timed, "other", base)

    waiting = f"waiting for another run of session {first.session_id}"
    queued = [
        n
        for n, (_, _, events) in spans.items()
        if any(getattr(e, "message", "") == waiting for e in events)
    ]
    assert len(queued) == 1
    (ahead,) = {"b", "c"} - set(queued)
    # The queued run's CLI only started (and said session_started) once the other had ended.
    assert spans[queued[0]][0] > spans[ahead][1]
    # A run of another session was not queued: it overlapped the run ahead.
    assert spans["other"][0] < spans[ahead][1]
    assert all(
        isinstance(events[-1], TurnCompleted) and events[-1].ok for _, _, events in spans.values()
    )


async def test_concurrent_runs_do_not_cross_talk(tmp_path: Path) -> None:
    # One scripted model for all; a Gemini home each, since CLIs sharing a home race on
    # settings.json, which each rewrites at startup (seen: exit 52, half-written JSON).
    # Four CLIs started at once on two cores are all running together (each takes seconds
    # to start), twice as many as the cores: the runs' starts, streams and turns interleave
    # on each core, and nothing pools runs (each is a process of its own, no limit), so a
    # larger number proves no more and costs a Node start a run (12 and 50 once: 97 s idle
    # with 50).
    count = 4
    scenario = Scenario(
        turns=[Reply([Text(f"answer {n}")], when=f"question {n}.") for n in range(count)]
    )
    results: dict[int, tuple[list[Event], RunResult]] = {}
    homes: list[IsolatedGemini] = []
    with ScriptedModel(scenario) as model:

        async def one(n: int) -> None:
            env = IsolatedGemini(model.url, root=tmp_path / str(n))
            homes.append(env)
            options = env.gemini_options()
            async with run_gemini(f"question {n}.", options) as handle:
                events = [event async for event in handle]
            results[n] = (events, handle.result)

        async with anyio.create_task_group() as tg:
            for n in range(count):
                tg.start_soon(one, n)
        assert model.problems == []
    assert sorted(results) == list(range(count))
    for n, (events, result) in results.items():
        assert (result.ok, result.answer) == (True, f"answer {n}"), (
            result.error,
            result.stderr_tail[-3000:],
        )
        assert [e.text for e in events if isinstance(e, UserMessage)] == [f"question {n}."]
        assert {e.session_id for e in events if e.type != "notice"} == {result.session_id}
    assert len({result.session_id for _, result in results.values()}) == count
    assert [pid for env in homes for pid in env.live_processes()] == []


def test_resume_on_0_15_4_which_refuses_a_stdin_only_prompt(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Reply([Text("I will remember 7.")]), Reply([Text("It was 7.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        base = env.gemini_options(executable=str(pinned_gemini("0.15.4")))
        first = run_gemini_sync("remember the number 7", base)
        second = run_gemini_sync("which number?", msgspec.structs.replace(base, resume="latest"))
    assert (first.ok, second.ok, second.answer) == (True, True, "It was 7.")
    assert second.session_id == first.session_id
