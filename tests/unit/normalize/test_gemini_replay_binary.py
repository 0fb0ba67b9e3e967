"""Binary data given as stream-json: one failed turn that says so, whatever the bytes."""

from __future__ import annotations

from hypothesis import given, strategies as st

from gemwire import replay_gemini_stream
from gemwire.events import TurnCompleted, TurnError


@given(
    before=st.binary(max_size=200).filter(lambda b: b"\n" not in b.lstrip()),
    after=st.lists(st.binary(max_size=300), max_size=5),
)
def test_a_nul_in_the_first_line_is_one_failed_turn_counting_every_byte(
    before: bytes, after: list[bytes]
) -> None:
    chunks = [before + b"\0", *after]
    size = sum(map(len, chunks))
    assert list(replay_gemini_stream(chunks)) == [
        TurnCompleted(
            agent="gemini",
            ok=False,
            stop_reason="error",
            error=TurnError(
                kind="protocol", message=f"not stream-json: {size:,} bytes of binary data"
            ),
            answer="",
        )
    ]
