"""No committed fixture holds a path of the machine that recorded it (issue 22, item 19):
the recorders put placeholders in their place (`gemwire.testing.recorder.MachinePaths`)."""

from __future__ import annotations

import re

from kit.corpus import FIXTURES

# Where such a path starts: not inside another path (`__HOME__/.gemini/tmp/` is Gemini's).
MACHINE_PATH = re.compile(rb"(?<![\w.~-])/(?:work|tmp|home|root)/")


def test_no_fixture_holds_a_machine_path() -> None:
    offenders = [
        f"{path.relative_to(FIXTURES)}: {match[0]!r}"
        for path in sorted(FIXTURES.rglob("*"))
        if path.is_file()
        for match in [
            MACHINE_PATH.search(path.read_bytes())
            or MACHINE_PATH.search(b"/" + str(path.relative_to(FIXTURES)).encode())
        ]
        if match
    ]
    assert offenders == []
