"""The Gemini ``--output-format json`` reducer: one document in, normalized events out.

The json format says much less than stream-json: no tool calls, no changed files, and
``response`` holds only the *last* model turn's text. What it does say maps onto the same
events, so a json-format run ends exactly like a stream-json one: ``session_started``
(once the id is known), ``message_delta`` (the response, whole), a ``notice`` per warning,
``usage`` and one ``turn_completed``. Pure and deterministic, like `GeminiNormalizer`.
"""

from __future__ import annotations

import msgspec

from gemwire._normalize.gemini_errors import (
    FATAL_KINDS,
    TURN_CUT_SHORT,
    api_error_kind,
    error_kind_for_exit_code,
    missing_result_error,
    stop_reason_for,
)
from gemwire._normalize.notices import notice
from gemwire.events import (
    Event,
    MessageDelta,
    ModelUsage,
    SessionStarted,
    TokenUsage,
    TurnCompleted,
    TurnError,
    Unknown,
    UsageReported,
)
from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.gemini import LoneSurrogates, MalformedLine
from gemwire.protocol.gemini_json import RepairedOutput
from gemwire.wire.gemini_json import JsonError, JsonOutput, SessionMetrics

__all__ = ("GeminiJsonNormalizer", "json_error_kind")

_HTTP_KINDS = {401: "auth", 403: "auth", 429: "rate_limited"}


def json_error_kind(error: JsonError, exit_code: int | None) -> str:
    """The error kind of a json-format ``error``: by type, then HTTP status, then exit code."""
    if error.type in FATAL_KINDS:
        return FATAL_KINDS[error.type]
    code = error.code if isinstance(error.code, int) else None
    if code is not None and code >= 400:
        return _HTTP_KINDS.get(code) or api_error_kind(error.message)
    if code:  # an exit code, e.g. 41 for a missing key
        return error_kind_for_exit_code(code)
    if exit_code:
        return error_kind_for_exit_code(exit_code)
    return "api"  # exit 0 with an error: the model's response was empty or invalid


def _usage(stats: SessionMetrics) -> TokenUsage:
    # The same sums stream-json's result reports (prompt tokens are its input tokens).
    by_model = {
        name: ModelUsage(
            input_tokens=model.tokens.prompt,
            output_tokens=model.tokens.candidates,
            cached_tokens=model.tokens.cached,
            total_tokens=model.tokens.total,
        )
        for name, model in stats.models.items()
    }
    return TokenUsage(
        input_tokens=sum(m.input_tokens for m in by_model.values()),
        output_tokens=sum(m.output_tokens for m in by_model.values()),
        cached_tokens=sum(m.cached_tokens or 0 for m in by_model.values()),
        total_tokens=sum(m.total_tokens for m in by_model.values()),
        by_model=by_model,
    )


class GeminiJsonNormalizer:
    """Reduces one json-format run to normalized events.

    Feed the error documents found on stderr as they come (`error_document`); then
    `finish` with what stdout held. A document on stdout wins over one on stderr.
    """

    def __init__(self, *, agent: str = "gemini") -> None:
        self._agent = agent
        self._session_id: str | None = None
        self._announced = False
        self._stderr_document: JsonOutput | None = None
        self._completed = False

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def error_document(self, document: JsonOutput | RepairedOutput) -> list[Event]:
        """A document printed on stderr (fatal errors); the first one counts."""
        if self._stderr_document is not None:
            return []  # the CLI prints some errors twice
        repair = None
        if isinstance(document, RepairedOutput):
            repair = document.repair
            document = document.document
        self._stderr_document = document
        return self._announce(document) + self._repair_notice(repair)

    def finish(
        self,
        output: JsonOutput | RepairedOutput | MalformedLine | OversizedLine | None,
        *,
        exit_code: int | None = None,
        stopped: TurnError | None = None,
    ) -> list[Event]:
        """End of run: ``output`` is what `JsonOutputDecoder.close` made of stdout."""
        if self._completed:
            return []
        events: list[Event] = []
        repair = None
        if isinstance(output, RepairedOutput):
            repair = output.repair
            output = output.document
        document = output if isinstance(output, JsonOutput) else self._stderr_document
        if isinstance(output, MalformedLine):
            events.append(Unknown(agent=self._agent, session_id=self._session_id, raw=output.line))
        elif isinstance(output, OversizedLine):
            message = f"skipped {output.size} bytes of output: over the {output.limit}-byte limit"
            events.append(notice(self._agent, self._session_id, message))
        if document is None:
            failure = (
                msgspec.structs.replace(stopped, exit_code=exit_code)
                if stopped is not None
                else missing_result_error(exit_code)
                if output is None
                else TurnError(
                    kind="protocol",
                    message="the output was not a json document",
                    exit_code=exit_code,
                )
            )
            return [*events, self._complete(error=failure, answer="", usage=None, cut_short=False)]
        events += self._announce(document) + self._repair_notice(repair)
        warnings = document.warnings if isinstance(document.warnings, list) else []
        sid = self._session_id
        events += [notice(self._agent, sid, warning, source="upstream") for warning in warnings]
        answer = document.response if isinstance(document.response, str) else ""
        if answer:
            events.append(MessageDelta(agent=self._agent, session_id=self._session_id, text=answer))
        usage = _usage(document.stats) if isinstance(document.stats, SessionMetrics) else None
        if usage is not None:
            events.append(
                UsageReported(agent=self._agent, session_id=self._session_id, usage=usage)
            )
        if stopped is not None:
            error: TurnError | None = msgspec.structs.replace(stopped, exit_code=exit_code)
        elif isinstance(document.error, JsonError):
            kind = json_error_kind(document.error, exit_code)
            error = TurnError(kind=kind, message=document.error.message, exit_code=exit_code)
        elif exit_code:  # a document without an error, yet the CLI failed
            error = TurnError(
                kind=error_kind_for_exit_code(exit_code),
                message=f"the agent exited with code {exit_code}",
                exit_code=exit_code,
            )
        else:
            error = None
        cut_short = any(w.startswith(TURN_CUT_SHORT) for w in warnings)
        events.append(self._complete(error=error, answer=answer, usage=usage, cut_short=cut_short))
        return events

    def _repair_notice(self, repair: LoneSurrogates | None) -> list[Event]:
        return [] if repair is None else [notice(self._agent, self._session_id, repair.message)]

    def _announce(self, document: JsonOutput) -> list[Event]:
        if self._announced or not isinstance(document.session_id, str):
            return []
        self._announced = True
        self._session_id = document.session_id
        return [SessionStarted(agent=self._agent, session_id=self._session_id)]

    def _complete(
        self, *, error: TurnError | None, answer: str, usage: TokenUsage | None, cut_short: bool
    ) -> TurnCompleted:
        self._completed = True
        if error is None:
            stop_reason = "max_turn_requests" if cut_short else "end_turn"
        else:
            stop_reason = stop_reason_for(error.kind)
        return TurnCompleted(
            agent=self._agent,
            session_id=self._session_id,
            ok=error is None,
            stop_reason=stop_reason,
            error=error,
            answer=answer,
            usage=usage,
        )
