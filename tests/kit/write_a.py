"""The scripted turn the keyboard-permission e2e tests share: Gemini writes ``a.txt``
(asking first), then says "Done."; and the change its question shows."""

from __future__ import annotations

from gemwire.testing import FunctionCall, IsolatedGemini, Reply, Scenario, Text

WRITE = Scenario(
    turns=[
        Reply(
            [Text("Writing."), FunctionCall("write_file", {"file_path": "a.txt", "content": "a\n"})]
        ),
        Reply([Text("Done.")]),
    ]
)


def diff_of_a(env: IsolatedGemini) -> list[str]:
    """The lines of the question's diff on a terminal: a.txt created with one line."""
    path = env.workspace / "a.txt"
    return [f"    --- {path}", f"    +++ {path}", "    @@ -0,0 +1 @@", "    +a"]
