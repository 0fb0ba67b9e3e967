"""`gemwire.antigravity.tool_calls`: each call's stages under one id, whatever the harness
names them at each stage (``create_file`` asked, ``edit_file`` run, the step's own id)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, strategies as st

from gemwire.antigravity.tool_calls import ToolCalls, denied_update
from gemwire.wire.antigravity import Step, ToolCall

WRITE_ARGS = {"TargetFile": "/w/new.txt", "CodeContent": "hi\n", "Overwrite": False}
INSERTED = [
    {
        "start_line": 0,
        "end_line": 0,
        "lines": [
            {"text": "hi", "action": "LINE_ACTION_INSERT"},
            {"text": "", "action": "LINE_ACTION_INSERT"},
        ],
    }
]


def step(step_id: str, status: str, name: str, args: dict[str, Any]) -> Step:
    call = ToolCall(name=name, args=args, id=step_id, step_id=step_id)
    return Step(id=step_id, type="TOOL_CALL", source="MODEL", status=status, tool_calls=[call])


def test_a_write_asked_then_run_is_one_call() -> None:
    calls = ToolCalls()
    asked = calls.asked("create_file", WRITE_ARGS)
    assert (asked.tool_call_id, asked.title, asked.kind, asked.status) == (
        "call-1", "Write /w/new.txt", "edit", "pending",
    )  # fmt: skip
    assert [c.path for c in asked.locations or []] == ["/w/new.txt"]
    running = step("t:2", "ACTIVE", "edit_file", {"file_path": "/w/new.txt"})
    assert calls.step(running) == [
        {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "in_progress"}
    ]
    assert calls.step(running) == []  # the same stage sent again says nothing new
    done_args = {"file_path": "/w/new.txt", "diff_block": INSERTED}
    assert calls.step(step("t:2", "DONE", "edit_file", done_args)) == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "completed",
            "content": [{"type": "diff", "path": "/w/new.txt", "newText": "hi\n"}],
            "rawOutput": done_args,
        }
    ]


def test_a_call_never_asked_is_announced_by_its_step() -> None:
    calls = ToolCalls()
    read = step("t:3", "ACTIVE", "view_file", {"file_path": "/w/a.txt"})
    assert calls.step(read) == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t:3",
            "title": "Read /w/a.txt",
            "name": "view_file",
            "kind": "read",
            "status": "in_progress",
            "locations": [{"path": "/w/a.txt"}],
            "rawInput": {"file_path": "/w/a.txt"},
        }
    ]
    failed = Step(
        id="t:3",
        type="TOOL_CALL",
        status="ERROR",
        error="no such file",
        tool_calls=read.tool_calls,
    )
    [update] = calls.step(failed)
    assert (update["toolCallId"], update["status"], update["content"]) == (
        "t:3",
        "failed",
        [{"type": "content", "content": {"type": "text", "text": "no such file"}}],
    )


def test_a_denied_call_is_never_matched_again() -> None:
    calls = ToolCalls()
    denied = calls.asked("run_command", {"CommandLine": "rm x"})
    calls.denied(denied.tool_call_id)
    assert denied_update(denied.tool_call_id, "Denied.")["status"] == "failed"
    [update] = calls.step(step("t:4", "ACTIVE", "run_command", {"command_line": "rm x"}))
    assert (update["sessionUpdate"], update["toolCallId"]) == ("tool_call", "t:4")


def test_an_edit_is_announced_with_what_it_replaces() -> None:
    args = {"TargetFile": "/w/a.txt", "TargetContent": "old", "ReplacementContent": "new"}
    assert ToolCalls().asked("edit_file", args).content == [
        # msgspec Structs compare by value
        __import__("gemwire.wire.acp", fromlist=["Diff"]).Diff(
            path="/w/a.txt", old_text="old", new_text="new"
        )
    ]


TOOLS = st.sampled_from(
    [
        ("create_file", "edit_file", "TargetFile", "file_path"),
        ("edit_file", "edit_file", "TargetFile", "file_path"),
        ("run_command", "run_command", "CommandLine", "command_line"),
    ]
)


@given(st.lists(st.tuples(TOOLS, st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=8))
def test_asked_calls_and_their_steps_in_order_keep_one_id_each(
    plan: list[tuple[tuple[str, str, str, str], str, bool]],
) -> None:
    """Asked and allowed (or denied), then run in the order asked: every allowed call's
    stages carry its asked id, once in progress and once completed; no call is announced
    twice; a denied call never runs."""
    calls = ToolCalls()
    seen: list[dict[str, Any]] = []
    allowed: list[tuple[str, str, str, str]] = []
    for (asked_name, run_name, arg, run_arg), target, allow in plan:
        call = calls.asked(asked_name, {arg: f"/w/{target}"})
        if allow:
            allowed.append((call.tool_call_id, run_name, run_arg, f"/w/{target}"))
        else:
            calls.denied(call.tool_call_id)
    for index, (_, run_name, run_arg, target) in enumerate(allowed):
        for status in ("ACTIVE", "ACTIVE", "DONE"):
            seen += calls.step(step(f"t:{index}", status, run_name, {run_arg: target}))
    assert [u["sessionUpdate"] for u in seen] == ["tool_call_update"] * 2 * len(allowed)
    assert [(u["toolCallId"], u["status"]) for u in seen] == [
        (call_id, status) for call_id, *_ in allowed for status in ("in_progress", "completed")
    ]
