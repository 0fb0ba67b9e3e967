"""A fake `gemini` for fault injection: misbehaves as FAKE_GEMINI_MODE says."""

from __future__ import annotations

import os
import signal
import sys
import time

INIT = '{"type":"init","timestamp":"t","session_id":"fake-session","model":"auto"}\n'
DELTA = '{"type":"message","timestamp":"t","role":"assistant","content":"%s","delta":true}\n'
RESULT = (
    '{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":3,"input_tokens":2,'
    '"output_tokens":1,"duration_ms":5,"tool_calls":0}}\n'
)

RETRY_429 = (
    'Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,'
    '"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",'
    '"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}\n'
)


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def main() -> None:
    mode = os.environ["FAKE_GEMINI_MODE"]
    sys.stdin.read()
    if mode == "stderr_flood":
        out(INIT)
        line = "x" * 999 + "\n"
        for _ in range(100_000):  # 100 MB while stdout stays quiet
            sys.stderr.write(line)
        out(DELTA % "survived" + RESULT)
    elif mode == "secret_across_cut":
        out(INIT)
        secret = os.environ["GEMINI_API_KEY"]
        # A line over 64 KiB that ends, for now, inside the key; the rest comes later.
        sys.stderr.write("x" * 70_000 + secret[:10])
        sys.stderr.flush()
        time.sleep(0.5)
        sys.stderr.write(secret[10:] + "y" * 100 + "\n")
        sys.stderr.flush()
        out(DELTA % "survived" + RESULT)
    elif mode == "secrets_on_stdout":  # keys of the environment on stdout, twice
        out(INIT)
        out(f"OPENAI_API_KEY={os.environ['OPENAI_API_KEY']}\n")  # not JSON: noise
        out(DELTA % f"the key is {os.environ['OPENAI_API_KEY']}")
        error = f"API key not valid: {os.environ['GOOGLE_API_KEY']}"
        out(
            '{"type":"result","timestamp":"t","status":"error","error":{"type":"Error",'
            f'"message":"{error}"}}}}\n'
        )
        sys.exit(1)
    elif mode == "secret_on_stderr_exit_1":  # no result: stderr explains the failure
        out(INIT)
        sys.stderr.write(f"Error: invalid x-api-key {os.environ['ANTHROPIC_API_KEY']}\n")
        sys.exit(1)
    elif mode == "long_line":
        out(INIT)
        out(DELTA % ("a" * 64_000_000))
        out(DELTA % "after" + RESULT)
    elif mode == "crash_mid_line":
        out(INIT + DELTA % "partial" + '{"type":"message","timestamp":"t","ro')
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "empty_exit0":
        pass
    elif mode == "result_then_exit_3":
        out(INIT + DELTA % "fine" + RESULT)
        sys.exit(3)
    elif mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        out(INIT)
        time.sleep(600)
    elif mode == "hang":  # a partial answer, then nothing; says where it is
        out(INIT + DELTA % "partial")
        with open(os.environ["FAKE_GEMINI_PID_FILE"], "w") as pid_file:
            pid_file.write(str(os.getpid()))
        time.sleep(600)
    elif mode == "killed_while_retrying":  # 0.61.0's retry line, then killed (e.g. OOM)
        out(INIT)
        sys.stderr.write(RETRY_429)
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "long_run":  # 50,000 events of a newer CLI, 1,005 failed attempts on stderr
        out(INIT)
        for n in range(1, 1006):
            sys.stderr.write(f"Attempt {n} failed: boom. Retrying...\n")
        sys.stderr.flush()
        out('{"type":"progress","timestamp":"t"}\n' * 50_000 + DELTA % "done" + RESULT)
    elif mode == "output_after_result":
        out(INIT + DELTA % "answer" + RESULT + DELTA % "late" + "a stray line\n")
    elif mode == "deep_tool_arguments":  # the real CLI passes 3,000-deep arguments through
        deep = "[" * 3000 + "]" * 3000
        out(INIT)
        out(
            '{"type":"tool_use","timestamp":"t","tool_name":"x","tool_id":"c1",'
            f'"parameters":{{"a":{deep}}}}}\n'
        )
        out('{"type":"message","timestamp":"t","role":"assistant","content":"caf\xe9"}\n')
        sys.stdout.flush()
        sys.stdout.buffer.write(
            b'{"type":"message","timestamp":"t","role":"assistant","content":"\xff"}\n'
        )
        out(DELTA % "after" + RESULT)
    elif mode == "say_relaunch":  # how the launcher would start: once, or relaunched
        out(INIT + DELTA % f"relaunch={os.environ.get('GEMINI_CLI_NO_RELAUNCH', 'unset')!r}")
        out(RESULT)
    elif mode == "lone_surrogate":  # a tool output cut in the middle of an emoji, as Node writes it
        out(INIT + DELTA % "big \\ud83d" + DELTA % " done" + RESULT)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
