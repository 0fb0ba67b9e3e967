"""Agent Client Protocol (ACP) v1 messages, exactly as upstream names them.

Pinned to the ACP schema ``v1.24.1`` (its unstable v1 schema, a superset of the stable one,
vendored as test data and held to these types by a drift test), protocol version 1. JSON field names are upstream's camelCase; every
type may carry upstream's ``_meta`` extension object (``meta`` here). Only the client
side is here: what a client sends, and what an agent sends to a client.

Session updates are one tagged union, ``update.SessionUpdate`` (its variants are the
types of `SESSION_UPDATE_TYPES`, tagged): an agent newer than this schema may send kinds
this module does not know, and those must survive as raw data, so the protocol layer reads
the ``sessionUpdate`` tag first and decodes a known kind with the union.

Unstable upstream methods that real agents implement are included and marked so
(Gemini CLI's ``session/set_model`` and the ``models`` of a new session, Claude Code's and
OpenCode's ``session/fork``), and so are the unstable update kinds (``notice``, ``plan_update``, ``plan_removed``,
``compaction_update``, ``compaction_summary_chunk``, ``subagent_update``,
``session_message``, ``session_message_chunk``), the unstable client capabilities
(``session.notices``, ``session.compaction``, ``plan``, ``subagents``) and a tool call's
``name``. What of
the stable schema is left raw, and why, is listed in ``untyped`` (editor features, provider setup, MCP over ACP).

One module per protocol area (``methods``, ``initialize``, ``sessions``, ``content``,
``tool_calls``, ``session_updates``, ``permissions``, ``fs``, ``terminals``,
``elicitation``, and the agents' ``extensions``); every type is
imported from here: ``from gemwire.wire import acp`` then ``acp.PromptRequest``.
"""

from __future__ import annotations

from gemwire.wire.acp import (
    content,
    elicitation,
    extensions,
    fs,
    initialize,
    methods,
    permissions,
    session_updates,
    sessions,
    terminals,
    tool_calls,
    update,
)
from gemwire.wire.acp.content import *
from gemwire.wire.acp.elicitation import *
from gemwire.wire.acp.extensions import *
from gemwire.wire.acp.fs import *
from gemwire.wire.acp.initialize import *
from gemwire.wire.acp.methods import *
from gemwire.wire.acp.permissions import *
from gemwire.wire.acp.session_updates import *
from gemwire.wire.acp.sessions import *
from gemwire.wire.acp.terminals import *
from gemwire.wire.acp.tool_calls import *

__all__: list[str] = ["update"]
__all__ += methods.__all__
__all__ += initialize.__all__
__all__ += sessions.__all__
__all__ += content.__all__
__all__ += tool_calls.__all__
__all__ += session_updates.__all__
__all__ += permissions.__all__
__all__ += fs.__all__
__all__ += elicitation.__all__
__all__ += extensions.__all__
__all__ += terminals.__all__
