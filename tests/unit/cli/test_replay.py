from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from kit.corpus import GOLDEN, RECORDED

from gemwire.cli import main


def replay(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["replay", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_transcript_of_a_successful_run() -> None:
    code, out, _ = replay(str(RECORDED / "write_and_shell/stream-json/run-1.stdout"))
    assert code == 0
    lines = out.splitlines()
    assert lines[1:] == [
        "> write hello.txt and show it",
        "I'll write the file.",
        "[edit] write_file: hello.txt",
        "  -> ok",
        "  written: hello.txt",
        "[execute] run_shell_command: cat hello.txt; echo oops >&2; exit 3",
        "  -> ok",
        "  | hi there",
        "  | oops",
        "Done. File written.",
        "-- ok (end_turn) · 2 tool calls · 1 file changed · 332 tokens (301 in · 31 out) · 0.3 s",
    ]
    assert lines[0].startswith("session ")
    assert lines[0].endswith(" (model auto)")


def test_json_output_is_the_normalized_events() -> None:
    code, out, _ = replay(
        "--json",
        "--cwd",
        "__WORKSPACE__",
        str(RECORDED / "write_and_shell/stream-json/run-1.stdout"),
    )
    assert code == 0
    assert out == (GOLDEN / "0.61.0/write_and_shell/run-1.events.jsonl").read_text()


def test_a_failed_turn_exits_with_the_status_of_its_kind_and_says_why() -> None:
    code, out, _ = replay(str(RECORDED / "max_session_turns/stream-json/run-1.stdout"))
    assert code == 8  # turn_limit
    assert out.splitlines()[-1] == (
        "-- FAILED (max_turn_requests) · turn_limit: Reached max session turns for this session. "
        "Increase the number of turns by specifying maxSessionTurns in settings.json. · 1 tool call · "
        "112 tokens (101 in · 11 out)"
    )


def test_stdin_cut_short_is_a_failed_turn_not_a_crash() -> None:
    data = (RECORDED / "plain_answer/stream-json/run-1.stdout").read_bytes()
    code, out, _ = replay("-", stdin=data[: len(data) // 2])
    assert code == 1
    assert out.splitlines()[-1] == "-- FAILED (error) · protocol: the stream ended without a result"


def test_strict_mode_exits_3_on_something_outside_the_protocol() -> None:
    code, _, err = replay("--strict", "-", stdin=b'{"type":"telemetry","timestamp":"t"}\n')
    assert code == 3
    assert err == "gemwire: line 1: unknown event type 'telemetry'\n"
    code, out, _ = replay("-", stdin=b'{"type":"telemetry","timestamp":"t"}\n')
    assert code == 1
    assert out.splitlines()[0] == '? unknown telemetry: {"type":"telemetry","timestamp":"t"}'


def test_a_missing_file_is_a_usage_error() -> None:
    code, _, err = replay("/no/such/file.jsonl")
    assert code == 2
    assert "No such file or directory" in err


def test_deep_nesting_and_invalid_utf8_replay_without_a_traceback(tmp_path: Path) -> None:
    deep = b"[" * 3000 + b"]" * 3000
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(
        b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}\n'
        b'{"type":"tool_use","timestamp":"t","tool_name":"x","tool_id":"c1","parameters":'
        + deep
        + b"}\n"
        b'{"type":"message","timestamp":"t","role":"assistant","content":"caf\xe9"}\n'
        b'{"type":"result","timestamp":"t","status":"success"}\n'
    )
    code, out, err = replay(str(path))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "session s (model auto)"
    assert lines[1].startswith('? unknown message: {"type":"tool_use"')
    assert lines[2:] == [
        "! warning: replaced 1 invalid UTF-8 byte(s) in the agent's output",
        "caf\ufffd",
        "-- ok (end_turn)",
    ]
    code, out, err = replay("--json", str(path))
    assert (code, err) == (0, "")
    assert [line.split(b'"')[3] for line in out.encode().splitlines()] == [
        b"session_started",
        b"unknown",
        b"notice",
        b"message_delta",
        b"turn_completed",
    ]


def test_binary_input_is_one_line_and_a_failed_status() -> None:
    # /bin/ls used to come out as one 8 KB line of escaped bytes, and exit 0.
    binary = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 40 + b"\n{}\n"
    code, out, err = replay("-", stdin=binary)
    assert (code, out, err) == (
        1,
        "-- FAILED (error) · protocol: not stream-json: 10,252 bytes of binary data\n",
        "",
    )
    code, out, err = replay("--strict", "-", stdin=binary)
    assert (code, out, err) == (3, "", "gemwire: not stream-json: 10,252 bytes of binary data\n")


def test_secrets_of_the_environment_are_masked() -> None:
    # `gemini -o stream-json … | gemwire replay -` runs where the agent's keys are set.
    capture = str(RECORDED / "write_and_shell/stream-json/run-1.stdout")
    runner = CliRunner(env={"GH_TOKEN": "hi there"})
    for args in (["--json", capture], [capture]):
        result = runner.invoke(main, ["replay", *args])
        assert result.exit_code == 0
        assert "hi there" not in result.stdout
    assert "  | ***" in result.stdout.splitlines()
