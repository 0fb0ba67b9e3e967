"""An agent scenario written as JSON reads back as itself, whatever its steps hold."""

from __future__ import annotations

import msgspec
from hypothesis import given, strategies as st

from gemwire.testing import (
    AgentScenario,
    AgentTurn,
    AwaitCancel,
    PromptError,
    ReadTextFile,
    RequestPermission,
    RunCommand,
    Say,
    Sleep,
    Step,
    Think,
    Update,
    WriteTextFile,
    load_agent_scenario,
)
from gemwire.wire import acp

texts = st.text(max_size=20)
counts = st.none() | st.integers(min_value=0, max_value=10**6)
updates = st.one_of(
    st.builds(
        lambda text: {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        },
        texts,
    ),
    st.builds(
        lambda content, status: {
            "sessionUpdate": "plan",
            "entries": [{"content": content, "priority": "high", "status": status}],
        },
        texts,
        st.sampled_from(["pending", "in_progress", "completed"]),
    ),
    st.builds(
        lambda used, size: {"sessionUpdate": "usage_update", "used": used, "size": size},
        st.integers(min_value=0),
        st.integers(min_value=0),
    ),
)
options = st.lists(
    st.builds(
        acp.PermissionOption,
        option_id=texts,
        name=texts,
        kind=st.sampled_from(["allow_once", "allow_always", "reject_once", "reject_always"]),
    ),
    max_size=3,
)
leaves: st.SearchStrategy[Step] = st.one_of(
    st.builds(Say, text=texts),
    st.builds(Think, text=texts),
    st.builds(Update, update=updates),
    st.builds(ReadTextFile, path=texts, line=counts, limit=counts),
    st.builds(WriteTextFile, path=texts, content=texts),
    st.builds(RunCommand, command=texts, args=st.lists(texts, max_size=3)),
    st.builds(Sleep, seconds=st.floats(min_value=0, max_value=1e6)),
    st.just(AwaitCancel()),
    st.builds(PromptError, code=st.integers(-33000, 1000), message=texts, data=st.none() | texts),
)
steps: st.SearchStrategy[Step] = leaves | st.builds(
    RequestPermission,
    tool_call=st.builds(acp.ToolCallUpdate, tool_call_id=texts, title=st.none() | texts),
    options=options,
    then=st.dictionaries(texts, st.lists(leaves, max_size=3), max_size=3),
)
scenarios = st.builds(
    AgentScenario,
    turns=st.lists(
        st.builds(
            AgentTurn,
            steps=st.lists(steps, max_size=5),
            stop_reason=st.sampled_from(["end_turn", "max_tokens", "refusal", "cancelled"]),
            repeat=st.integers(1, 3),
        ),
        max_size=3,
    ),
    agent_info=st.builds(acp.Implementation, name=texts, version=texts),
)


@given(scenarios)
def test_a_scenario_written_as_json_reads_back_as_itself(scenario: AgentScenario) -> None:
    assert load_agent_scenario(msgspec.json.encode(scenario)) == scenario
