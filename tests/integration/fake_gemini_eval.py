"""A stand-in Gemini CLI for ``gemwire eval`` tests (synthetic, standard library only).

It answers every attempt at once over stream-json, writing ``42`` to ``answer`` in its
workspace (the working folder, ``OUT/workspaces/<attempt>``). With ``FAKE_EVAL_HOLD`` set to
a folder, a second attempt (a workspace ending in ``.2``) writes its pid to
``FAKE_EVAL_HOLD/<attempt>`` (by way of ``tmp-<attempt>``) and waits to be stopped, so a test can signal the eval while
exactly those attempts run.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

INIT = '{"type":"init","timestamp":"t","session_id":"%s","model":"fake"}\n'
DELTA = '{"type":"message","timestamp":"t","role":"assistant","content":"%s","delta":true}\n'
RESULT = (
    '{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":3,'
    '"input_tokens":2,"output_tokens":1,"duration_ms":5,"tool_calls":0}}\n'
)


def main() -> None:
    sys.stdin.read()
    attempt = Path.cwd().name
    sys.stdout.write(INIT % f"session-{attempt}")
    sys.stdout.flush()
    hold = os.environ.get("FAKE_EVAL_HOLD")
    if hold and attempt.endswith(".2"):
        partial = Path(hold, f"tmp-{attempt}")
        partial.write_text(str(os.getpid()))
        partial.rename(Path(hold, attempt))  # whole, for a test reading it
        signal.pause()  # until gemwire (or its reaper, gemwire gone) stops it
    Path("answer").write_text("42")
    sys.stdout.write(DELTA % "fixed" + RESULT)


if __name__ == "__main__":
    main()
