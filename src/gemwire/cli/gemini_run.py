"""A Gemini CLI run for a command (``run``, ``demo``): every event shown as it comes, and a
stopping signal cancelling it (`gemwire.cli.signals`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gemwire.cli.signals import SignalStop

if TYPE_CHECKING:
    from gemwire import GeminiOptions, RunResult
    from gemwire.cli.live import Output

__all__ = ("show_gemini_run",)


def show_gemini_run(prompt: str, options: GeminiOptions, output: Output) -> RunResult:
    """Run Gemini CLI on ``prompt``, every event shown in ``output``, closed with the
    resume line; the result.

    Ctrl-C, SIGTERM and SIGHUP stop the run as `GeminiRun.cancel` does: the events go on
    to ``turn_completed`` (kind ``cancelled``) and the view keeps what it showed. Then the
    process exits 130, 143 or 129, as a shell reports them.
    """
    from gemwire import run_gemini

    stop = SignalStop()

    async def go() -> RunResult:
        async with run_gemini(prompt, options) as handle:
            stop.cancels(handle.cancel)
            async for event in handle:
                output.show(event)
        return handle.result

    with output:
        result = stop.run(go)
        output.close(result.resume.command if result and result.resume else None)
    stop.exit_if_stopped()
    assert result is not None  # only a signal leaves none
    return result
