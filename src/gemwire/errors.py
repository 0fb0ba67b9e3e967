"""The one exception tree of gemwire.

Every error gemwire raises on purpose derives from `GemwireError`; errors from the
libraries underneath (msgspec, anyio, OSError) are mapped at the layer boundary and
chained with ``raise ... from exc``.

    GemwireError
    ├── AgentNotFound              an agent executable is missing or cannot be run
    │   └── GeminiNotFound         ... the Gemini CLI; the message carries the install command
    ├── UnsupportedVersion         the agent is older than gemwire supports
    ├── PromptTooLarge             the prompt is over what the agent accepts on stdin
    ├── InvalidOptions             options that contradict each other (also a ValueError)
    │   ├── InvalidTasks           a batch's tasks file has bad lines (``.problems``)
    │   └── PermissionsUnenforceable  a preset or callback the agent cannot be made to ask for
    │                              (its modes unknown, or none asks); ``--mode`` overrides
    ├── ProtocolError              the bytes are not the protocol (only raised in strict mode;
    │   │                          lenient decoding reports problems as records instead)
    │   └── MalformedMessageError  a line that is not a known message of the known shape
    ├── RunFailed                  a run did not succeed (``.kind``, ``.exit_code``, ``.result``);
    │   │                          one class per ``turn_completed`` error kind:
    │   ├── AuthFailed             auth: no or a bad key, 401/403
    │   │   └── AccountIneligible  ineligible: Google no longer serves the account's tier
    │   ├── UntrustedWorkspace     untrusted: the folder is not trusted (exit 55)
    │   ├── RateLimited            rate_limited: HTTP 429 / RESOURCE_EXHAUSTED (``.retry_delay``)
    │   │   └── QuotaExhausted     quota: a quota that retrying will not fix
    │   ├── ApiFailed              api: any other API error, empty or invalid model responses
    │   ├── InvalidInput           input: no prompt, a bad --resume, an existing --session-id
    │   ├── ConfigInvalid          config: settings, sandbox or policy problems
    │   ├── TurnLimitReached       turn_limit: model.maxSessionTurns
    │   ├── RunTimedOut            timeout: gemwire's wall-clock or idle timeout (a TimeoutError)
    │   ├── RunCancelled           cancelled: the caller stopped the run, or a budget did
    │   ├── AgentCrashed           crashed: killed, or exited without a result
    │   ├── AgentProtocolViolated  protocol: the output was not the protocol
    │   └── AgentFailed            agent: anything else the agent reported
    ├── AgentRequestFailed         an ACP agent answered a request with a JSON-RPC error
    │                              (``.method``, ``.code``, ``.data``; ``.unsupported``)
    ├── AccessDenied               the ACP client refused an agent's file or terminal request
    │                              (``.code``: the JSON-RPC error answered; ``.path``)
    ├── LockFolderUnsafe           the session lock folder is not the user's alone (``.path``)
    ├── SandboxUnavailable         ``--sandbox`` cannot start one here (no bubblewrap, no user
    │                              namespaces); the message says how to fix it
    ├── BatchOutputError           a batch's output folder cannot be read or written (a damaged
    │                              results.jsonl, a full disk); what finished stays on disk
    ├── ScenarioError              a scripted model's or agent's scenario is invalid (gemwire.testing)
    ├── ScriptedError              a scripted ACP agent's handler answers with this JSON-RPC
    │                              error (``.code``, ``.data``; gemwire.testing)
    ├── RemoteError                a ``gemwire serve`` server refused a request (gemwire.remote):
    │   │                          ``.kind`` and ``.status`` of its JSON error
    │   └── ServerUnreachable      the server cannot be reached, or its event stream stayed
    │                              down through every reconnection attempt
    └── SessionError               a saved session cannot be read (gemwire.sessions)
        └── SessionNotFound        no session matches the id, index, ``latest`` or path given

Every ``__init__`` takes the message first and context as keyword arguments with
defaults, so exceptions pickle and copy (``type(e)(*e.args)``).
"""

from __future__ import annotations

__all__ = (
    "RUN_FAILURES",
    "AccessDenied",
    "AccountIneligible",
    "AgentCrashed",
    "AgentFailed",
    "AgentNotFound",
    "AgentProtocolViolated",
    "AgentRequestFailed",
    "ApiFailed",
    "AuthFailed",
    "BatchOutputError",
    "ConfigInvalid",
    "GeminiNotFound",
    "GemwireError",
    "InvalidInput",
    "InvalidOptions",
    "InvalidTasks",
    "LockFolderUnsafe",
    "MalformedMessageError",
    "PermissionsUnenforceable",
    "PromptTooLarge",
    "ProtocolError",
    "QuotaExhausted",
    "RateLimited",
    "RemoteError",
    "RunCancelled",
    "RunFailed",
    "RunTimedOut",
    "SandboxUnavailable",
    "ScenarioError",
    "ServerUnreachable",
    "SessionError",
    "SessionNotFound",
    "TurnLimitReached",
    "UnsupportedVersion",
    "UntrustedWorkspace",
    "sole_exception",
)


class GemwireError(Exception):
    """Base class of every error gemwire raises."""


class AgentNotFound(GemwireError):
    """An agent executable is missing or cannot be run."""

    def __init__(self, message: str, *, executable: str | None = None) -> None:
        super().__init__(message)
        self.executable = executable


class GeminiNotFound(AgentNotFound):
    """The Gemini CLI is not installed where gemwire looked."""

    INSTALL_COMMAND = "npm install -g @google/gemini-cli"


class ProtocolError(GemwireError):
    """The bytes an agent sent are not the protocol."""


class MalformedMessageError(ProtocolError):
    """A line that is not a known message of the known shape (strict mode).

    ``line`` is the offending line (decoded, invalid bytes replaced), ``lineno`` its
    1-based number in the stream.
    """

    def __init__(self, message: str, *, line: str = "", lineno: int = 0) -> None:
        super().__init__(f"line {lineno}: {message}" if lineno else message)
        self.line = line
        self.lineno = lineno


class UnsupportedVersion(GemwireError):
    """The agent's version is older than the oldest gemwire supports."""


class PromptTooLarge(GemwireError, ValueError):
    """The prompt is larger than the agent reads from stdin (it would be cut silently)."""


class InvalidOptions(GemwireError, ValueError):
    """Run options that cannot work together; nothing was started."""


class InvalidTasks(InvalidOptions):
    """A batch's tasks cannot run as given; ``problems`` names every bad line."""

    def __init__(self, message: str, *, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class PermissionsUnenforceable(InvalidOptions):
    """A session has a permission preset other than ``all`` (or a callback), and gemwire
    cannot put the agent into a mode that asks before acting: its modes are unknown to
    gemwire, the asking mode is not offered, or the agent did not take it. The message
    says which, and that ``--mode`` (`AcpOptions.mode`) runs it in a mode of the user's
    choosing instead."""


class RunFailed(GemwireError):
    """A run did not succeed. ``kind`` is the ``turn_completed`` error kind.

    ``result`` is the run's whole `RunResult` (partial answer, usage, session id survive
    every failure); it is ``None`` only on a copy made by pickling.
    """

    kind = "agent"

    def __init__(
        self,
        message: str,
        *,
        exit_code: int | None = None,
        result: object = None,
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.result = result
        self.retry_delay = retry_delay
        """Seconds Google asked to wait before retrying (``rate_limited``, ``quota``)."""


class AuthFailed(RunFailed):
    kind = "auth"


class UntrustedWorkspace(RunFailed):
    kind = "untrusted"


class AccountIneligible(AuthFailed):
    """Gemini CLI's ``IneligibleTierError``: Google ended the service for this account's
    tier (the message says what to use instead)."""

    kind = "ineligible"


class RateLimited(RunFailed):
    kind = "rate_limited"


class QuotaExhausted(RateLimited):
    kind = "quota"


class ApiFailed(RunFailed):
    kind = "api"


class InvalidInput(RunFailed):
    kind = "input"


class ConfigInvalid(RunFailed):
    kind = "config"


class TurnLimitReached(RunFailed):
    kind = "turn_limit"


class RunTimedOut(RunFailed, TimeoutError):
    kind = "timeout"


class RunCancelled(RunFailed):
    kind = "cancelled"


class AgentCrashed(RunFailed):
    kind = "crashed"


class AgentProtocolViolated(RunFailed):
    kind = "protocol"


class AgentFailed(RunFailed):
    kind = "agent"


def _subclasses(cls: type[RunFailed]) -> list[type[RunFailed]]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


# Built once, here: a caller's own subclass of a RunFailed class never takes over a kind.
RUN_FAILURES: dict[str, type[RunFailed]] = {cls.kind: cls for cls in _subclasses(RunFailed)}
"""The exception class for each error kind; unknown kinds raise `RunFailed` itself."""


class AccessDenied(GemwireError):
    """An ACP agent's file or terminal request the client refuses: outside the session's
    folders, a NUL byte, a command the policy does not allow, a missing file.

    ``code`` is the JSON-RPC error code the client answers with: -32602 (Invalid params),
    or -32002 (Resource not found) for a file that does not exist.
    """

    def __init__(self, message: str, *, code: int = -32602, path: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.path = path


class AgentRequestFailed(GemwireError):
    """An ACP agent answered a request with a JSON-RPC error.

    ``unsupported`` is true for "Method not found" (-32601): the agent does not have the
    method, though it may have advertised it.
    """

    def __init__(
        self, message: str, *, method: str = "", code: int = 0, data: object = None
    ) -> None:
        super().__init__(message)
        self.method = method
        self.code = code
        self.data = data

    @property
    def unsupported(self) -> bool:
        return self.code == -32601


class BatchOutputError(GemwireError):
    """A batch's output folder cannot be read or written: a damaged ``results.jsonl``, a
    full disk. Every finished result stays on disk, and the folder stays resumable."""


class SandboxUnavailable(GemwireError):
    """``--sandbox`` cannot start a sandbox here (no bubblewrap, no user namespaces); the
    message says how to fix it. An eval never runs unsandboxed instead."""


class LockFolderUnsafe(GemwireError):
    """The folder for session lock files is not the user's alone (another owner, writable
    by others, a symlink); gemwire will not put lock files there."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class ScenarioError(GemwireError, ValueError):
    """A scripted model's or scripted agent's scenario is invalid; the message names the
    problem and where.

    Also a `ValueError`, so msgspec reports one raised while decoding with its JSON path.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(f"{source}: {message}" if source else message)
        self.source = source


class RemoteError(GemwireError):
    """A ``gemwire serve`` server answered a request with its JSON error
    (``{"error": {"kind", "message"}}``): ``kind`` is the error's kind (``not_found``,
    ``conflict``, ``unauthorized``, ...), ``status`` its HTTP status."""

    kind = "internal"

    def __init__(self, message: str, *, kind: str | None = None, status: int | None = None):
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.status = status


class ServerUnreachable(RemoteError):
    """The server cannot be reached, or a session's event stream dropped and did not come
    back within the reconnection attempts (the cause is chained)."""

    kind = "unreachable"


class SessionError(GemwireError):
    """A saved Gemini session cannot be read (the file, not its contents: bad lines in a
    session file are reported as notices)."""


class SessionNotFound(SessionError, LookupError):
    """No saved session matches what was asked for; the message says where gemwire looked."""


def sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside ``group`` (groups nested in it included), if there is
    exactly one: what a task group raises when a single task failed, to raise as itself.

    >>> sole_exception(ExceptionGroup("g", [ExceptionGroup("h", [KeyError("k")])]))
    KeyError('k')
    >>> sole_exception(ExceptionGroup("g", [KeyError("k"), ValueError()])) is None
    True
    """
    leaves: list[BaseException] = []
    todo: list[BaseException] = [group]
    while todo:
        exc = todo.pop()
        if isinstance(exc, BaseExceptionGroup):
            todo.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else None
