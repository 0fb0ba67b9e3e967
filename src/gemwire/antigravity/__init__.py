"""Antigravity as an ACP agent: ``gemwire agent antigravity`` (the ``antigravity`` extra).

Google's google-antigravity SDK bundles Antigravity's agent runtime, the ``localharness``
binary; this package drives it and speaks ACP on stdin and stdout, so any ACP client (gemwire's
own, the ACP SDKs', Zed) runs Antigravity like any other agent (docs/antigravity.md).

- `server` — the JSON-RPC side: methods, the agent's requests, the end of the process.
- `session` — one ACP session on one conversation: prompts, permissions, cancel, modes.
- `harness` — the SDK, imported only when a conversation starts (it takes ~2.7 s).
- `updates`, `tool_calls` — sans-IO: a turn's steps as ACP updates, one id per tool call.
- `settings` — the environment (the model as Gemini CLI's), the home, the modes.
- `stdio` — the protocol's stdin and stdout, non-blocking.
"""
