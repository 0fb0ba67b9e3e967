"""``gemwire agent NAME``: an agent gemwire ships, speaking ACP on stdin and stdout.

    gemwire agent antigravity     # Antigravity (the `antigravity` extra), for any ACP client

Not a command for people: an ACP client starts it (``gemwire acp --agent antigravity``, Zed's
``agent_servers``, the ACP SDKs) and talks JSON-RPC to it. Its log goes to stderr.
"""

from __future__ import annotations

import click

__all__ = ("agent",)


@click.group(name="agent")
def agent() -> None:
    """Agents gemwire ships, as ACP agents on stdin and stdout (for ACP clients)."""


@agent.command(name="antigravity")
def antigravity() -> None:
    """Antigravity (google-antigravity's bundled harness) as an ACP agent.

    The model is configured as Gemini CLI's: GEMINI_API_KEY or GOOGLE_API_KEY,
    GOOGLE_GEMINI_BASE_URL, GEMINI_MODEL. Conversations are kept under
    $HOME/.gemini/antigravity. Needs the extra: pip install 'gemwire[antigravity]'.
    """
    import importlib.util

    import anyio

    from gemwire.antigravity.server import run_agent
    from gemwire.antigravity.stdio import claim_stdio

    if importlib.util.find_spec("google.antigravity") is None:
        raise click.ClickException(
            "google-antigravity is not installed: pip install 'gemwire[antigravity]'"
        )
    stdio = claim_stdio()
    anyio.run(run_agent, stdio, backend="asyncio")
