"""gemwire's test kit: run the real Gemini CLI offline against a scripted model.

    from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text

    scenario = Scenario(turns=[Reply([Text("Hello!")])])
    with ScriptedModel(scenario) as model, IsolatedGemini(model.url) as env:
        subprocess.run(["gemini", "-o", "stream-json"], input=b"say hello",
                       cwd=env.workspace, env=env.environ())

- `Scenario` and its turns/chunks: what the model answers (plain data; JSON or Python).
- `ScriptedModel`: the stand-in Gemini API on 127.0.0.1, recording every request.
- `IsolatedGemini`: a throwaway Gemini home and workspace, and the env to run the CLI in.
- `pinned_gemini`, `pinned_gemini_command`: the project-local CLI versions gemwire is tested
  against.
- The fixture recorder: ``python -m gemwire.testing record CASE.json ...``.
- A shell against the scripted model: ``python -m gemwire.testing serve SCENARIO.json``
  prints the export lines (`gemwire.testing.serve`).
- `ScriptedAgent` and its `AgentScenario`: an ACP agent that plays a scenario (updates,
  permission requests, fs and terminal calls, errors, waits), to test an ACP client or UI
  with: in this process (`scripted_client`), or ``python -m gemwire.testing agent SCENARIO``
  over stdio.
"""

from __future__ import annotations

from gemwire.testing.agent_scenario import (
    AgentScenario,
    AgentTurn,
    AwaitCancel,
    PromptError,
    ReadTextFile,
    RequestPermission,
    RunCommand,
    Say,
    ScriptedError,
    Sleep,
    Step,
    Think,
    Update,
    WriteTextFile,
    load_agent_scenario,
)
from gemwire.testing.environment import DEFAULT_SETTINGS, FAKE_API_KEY, IsolatedGemini
from gemwire.testing.model_server import RecordedRequest, ScriptedModel
from gemwire.testing.pinned import (
    CURRENT_VERSION,
    PINNED_VERSIONS,
    pinned_gemini,
    pinned_gemini_command,
)
from gemwire.testing.recorder import CliRun, RecordingCase, load_case, record_case
from gemwire.testing.scenario import (
    Chunk,
    Delay,
    Fail,
    FunctionCall,
    FunctionCalls,
    Hang,
    Reply,
    Scenario,
    Text,
    Thought,
    Truncate,
    Turn,
    Usage,
    load_scenario,
    seed_workspace,
)
from gemwire.testing.scripted_agent import (
    MethodHandler,
    PromptHandler,
    ScriptedAgent,
    scripted_client,
    serve_stdio,
)

__all__ = (
    "CURRENT_VERSION",
    "DEFAULT_SETTINGS",
    "FAKE_API_KEY",
    "PINNED_VERSIONS",
    "AgentScenario",
    "AgentTurn",
    "AwaitCancel",
    "Chunk",
    "CliRun",
    "Delay",
    "Fail",
    "FunctionCall",
    "FunctionCalls",
    "Hang",
    "IsolatedGemini",
    "MethodHandler",
    "PromptError",
    "PromptHandler",
    "ReadTextFile",
    "RecordedRequest",
    "RecordingCase",
    "Reply",
    "RequestPermission",
    "RunCommand",
    "Say",
    "Scenario",
    "ScriptedAgent",
    "ScriptedError",
    "ScriptedModel",
    "Sleep",
    "Step",
    "Text",
    "Think",
    "Thought",
    "Truncate",
    "Turn",
    "Update",
    "Usage",
    "WriteTextFile",
    "load_agent_scenario",
    "load_case",
    "load_scenario",
    "pinned_gemini",
    "pinned_gemini_command",
    "record_case",
    "scripted_client",
    "seed_workspace",
    "serve_stdio",
)
