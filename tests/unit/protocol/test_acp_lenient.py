"""A result with a malformed optional part: the part dropped and said, the rest kept; a
required field that does not fit still fails the whole result (`protocol.acp.lenient`)."""

from __future__ import annotations

import json

from gemwire.protocol.acp import AgentError, AgentResult, ProtocolViolation, calls
from gemwire.protocol.acp.connection import AcpClientConnection
from gemwire.wire.acp.sessions import NewSessionRequest, NewSessionResponse

# qwen serve 0.24.4's /acp answer to session/new (its models have "id", not "modelId").
QWEN_MODELS = {
    "currentModelId": "qwen3-coder",
    "availableModels": [{"id": "qwen3-coder", "name": "Qwen3 Coder"}, {"modelId": "m2"}],
}


def _answer(connection: AcpClientConnection, result: object) -> list[object]:
    request_id, _ = connection.send_call(
        calls.new_session(NewSessionRequest(cwd="/w", mcp_servers=[]))
    )
    answer = {"jsonrpc": "2.0", "id": request_id, "result": result}
    return list(connection.receive_message(json.dumps(answer).encode()))


def test_a_model_without_its_model_id_is_dropped_with_a_notice_and_the_session_opens() -> None:
    items = _answer(AcpClientConnection(), {"sessionId": "s1", "models": QWEN_MODELS})
    *violations, result = items
    assert [v.reason for v in violations if isinstance(v, ProtocolViolation)] == [
        "dropped $.models.availableModels[0] of the result of session/new: it does not fit its type"
    ]
    assert isinstance(result, AgentResult)
    assert isinstance(result.result, NewSessionResponse)
    assert result.result.session_id == "s1"
    assert result.result.models is not None
    assert result.result.models.current_model_id == "qwen3-coder"
    assert [m.model_id for m in result.result.models.available_models] == ["m2"]


def test_a_required_field_that_does_not_fit_still_fails_the_result() -> None:
    items = _answer(AcpClientConnection(), {"sessionId": 7, "models": QWEN_MODELS})
    assert [type(i) for i in items] == [ProtocolViolation, AgentError]


def test_a_malformed_optional_object_is_dropped_whole() -> None:
    items = _answer(AcpClientConnection(), {"sessionId": "s1", "modes": {"availableModes": []}})
    *violations, result = items
    assert [v.reason for v in violations if isinstance(v, ProtocolViolation)] == [
        "dropped $.modes of the result of session/new: it does not fit its type"
    ]
    assert isinstance(result, AgentResult)
    assert result.result == NewSessionResponse(session_id="s1")
