"""`gemwire.antigravity.updates` and `settings`: a turn's steps as ACP updates, the usage of
each model call, what each mode does, and the model configured as Gemini CLI's is."""

from __future__ import annotations

import pytest

from gemwire.antigravity.settings import MODES, Settings, decide
from gemwire.antigravity.tool_calls import ToolCalls
from gemwire.antigravity.updates import TurnUpdates, history_updates
from gemwire.errors import AuthFailed
from gemwire.wire import acp
from gemwire.wire.antigravity import Step, UsageMetadata

NONE = UsageMetadata()


def said(kind: str, text: str) -> dict[str, object]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def model(**fields: object) -> Step:
    return Step(source="MODEL", target="TARGET_USER", status="ACTIVE", **fields)  # type: ignore[arg-type]


def test_thoughts_and_text_are_the_models_steps_to_the_user() -> None:
    turn = TurnUpdates(ToolCalls(), NONE)
    assert turn.step(model(thinking_delta="hmm"), NONE) == [said("agent_thought_chunk", "hmm")]
    assert turn.step(model(content_delta="Hi"), NONE) == [said("agent_message_chunk", "Hi")]
    user = Step(source="USER", status="DONE", content_delta="go")
    assert turn.step(user, NONE) == []
    tool = Step(source="MODEL", type="TOOL_CALL", target="TARGET_ENVIRONMENT", content_delta="x")
    assert turn.step(tool, NONE) == []


def test_each_model_calls_tokens_once_and_the_turns_sum() -> None:
    start = UsageMetadata(total_token_count=50, prompt_token_count=40, candidates_token_count=10)
    turn = TurnUpdates(ToolCalls(), start)
    after = UsageMetadata(
        total_token_count=160,
        prompt_token_count=140,
        candidates_token_count=20,
        thoughts_token_count=0,
        cached_content_token_count=0,
    )
    assert turn.step(model(content_delta="a"), after)[-1] == {
        "sessionUpdate": "usage_update",
        "used": 110,
        "size": 1_048_576,
    }
    assert turn.finish(after) == []
    assert turn.usage() == acp.Usage(
        total_tokens=110,
        input_tokens=100,
        output_tokens=10,
        thought_tokens=0,
        cached_read_tokens=0,
    )
    assert TurnUpdates(ToolCalls(), start).usage() is None


def test_a_denials_error_step_is_not_the_turns_error() -> None:
    turn = TurnUpdates(ToolCalls(), NONE)
    turn.denied()
    denial = Step(status="ERROR", content_delta="Denied by user (*).", error="Denied by user")
    assert turn.step(denial, NONE) == []
    assert turn.error is None
    assert turn.step(Step(status="ERROR", error="Error 503"), NONE) == []
    assert turn.error == "Error 503"


def test_a_replay_says_each_step_once_as_it_ended() -> None:
    steps = [
        Step(id="t:0", source="USER", status="DONE", content="go"),
        Step(id="t:1", source="MODEL", target="TARGET_USER", status="ACTIVE", content="Hel"),
        Step(id="t:1", source="MODEL", target="TARGET_USER", status="DONE", content="Hello"),
    ]
    assert history_updates(steps) == [
        said("user_message_chunk", "go"),
        said("agent_message_chunk", "Hello"),
    ]


@pytest.mark.parametrize(
    ("mode", "read", "write", "command"),
    [
        ("default", "allow", "ask", "ask"),
        ("confirm_run_command", "allow", "allow", "ask"),
        ("allow_all", "allow", "allow", "allow"),
        ("read_only", "allow", "deny", "deny"),
    ],
)
def test_what_each_mode_does(mode: str, read: str, write: str, command: str) -> None:
    assert mode in {m.id for m in MODES}
    assert (decide(mode, "view_file"), decide(mode, "create_file")) == (read, write)
    assert decide(mode, "run_command") == command


def test_the_model_is_configured_as_gemini_clis() -> None:
    env = {
        "HOME": "/h",
        "GOOGLE_API_KEY": "g",
        "GEMINI_API_KEY": "k",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
        "GEMINI_MODEL": "gemini-x",
    }
    assert Settings.from_environ(env) == Settings(
        app_data_dir="/h/.gemini/antigravity",
        api_key="k",
        base_url="http://127.0.0.1:9",
        model="gemini-x",
    )
    assert Settings.from_environ({"HOME": "/h", "GOOGLE_API_KEY": "g"}).api_key == "g"
    with pytest.raises(AuthFailed, match="GEMINI_API_KEY"):
        Settings.from_environ({"HOME": "/h"})
