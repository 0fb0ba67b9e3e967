"""What a person sees of an event stream: settled blocks, and the part that is still moving.

`View` takes the normalized events of any source (a Gemini run, a replay, an ACP session,
a saved session) and answers two questions: which blocks are settled now (print them
once, they never change) and what the moving part looks like (text still streaming,
tool calls still running, the footer). It does no I/O and reads no clock of its own, so
the same events and times always give the same output; `gemwire.cli.live` puts it on a
terminal.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.text import Text

from gemwire.cli import render
from gemwire.cli.presenter import Tally
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    Notice,
    PermissionRequested,
    PermissionResolved,
    PlanUpdated,
    SessionStarted,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallUpdated,
    TurnCompleted,
    Unknown,
    UsageReported,
    UserMessage,
)

__all__ = ("View", "split_settled")

_FRAMES_PER_SECOND = 10


def split_settled(text: str) -> tuple[str, str]:
    """Split streamed Markdown into the paragraphs that are complete and the rest.

    A paragraph is complete once a blank line follows it outside a code fence; the text
    after the last such line may still grow.

    >>> split_settled("One.\\n\\nTwo, still")
    ('One.', 'Two, still')
    >>> split_settled("```\\ncode\\n\\nmore")
    ('', '```\\ncode\\n\\nmore')
    """
    in_fence = False
    end = 0
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and not line.strip():
            end = position
    return text[:end].strip("\n"), text[end:]


class View:
    """The state of one stream of events, as a person would follow it.

    Args:
        cwd: the run's workspace; paths inside it are shown relative to it.
        verbose: show every line of tool output, not the first few.
        clock: seconds from a monotonic clock, to time tool calls and the turn; ``None``
            for a stream that is not happening now (a file being replayed): no times shown.
    """

    def __init__(
        self,
        *,
        cwd: str | None = None,
        verbose: bool = False,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.cwd = cwd
        self.verbose = verbose
        self._clock = clock
        self._started_at = clock() if clock else None
        self.tally = Tally()
        self._text = ""
        self._thought = ""
        self._cards: dict[str, render.ToolCard] = {}
        self._last = ""  # what the last settled block was: "text" or "other"

    @property
    def turn(self) -> TurnCompleted | None:
        """The `TurnCompleted` event, once it came."""
        return self.tally.turn

    def title_of(self, call_id: str | None) -> str | None:
        """The title of a tool call seen so far (for a permission prompt)."""
        return self.tally.title_of(call_id)

    def _now(self) -> float | None:
        return self._clock() if self._clock else None

    def _elapsed(self, now: float | None) -> float | None:
        return None if now is None or self._started_at is None else now - self._started_at

    def _settle(self, blocks: list[RenderableType], block: RenderableType, what: str) -> None:
        # A blank line around text (paragraphs settle one by one), none between the rest.
        if self._last and "text" in (what, self._last):
            blocks.append(Text(""))
        blocks.append(block)
        self._last = what

    def _flush(self, blocks: list[RenderableType], keep: str = "") -> None:
        """Settle the text and reasoning streamed so far (except the stream named ``keep``)."""
        if self._thought.strip() and keep != "thought":
            self._settle(blocks, render.thought(self._thought.strip("\n")), "text")
            self._thought = ""
        if self._text.strip() and keep != "text":
            self._settle(blocks, render.answer(self._text.strip("\n")), "text")
            self._text = ""

    def apply(self, event: Event) -> list[RenderableType]:
        """Take one event; returns the blocks that are settled now, in order."""
        blocks: list[RenderableType] = []
        self.tally.apply(event)
        match event:
            case MessageDelta():
                self._flush(blocks, keep="text")
                settled, self._text = split_settled(self._text + event.text)
                if settled:
                    self._settle(blocks, render.answer(settled), "text")
            case ThoughtDelta():
                self._flush(blocks, keep="thought")
                settled, self._thought = split_settled(self._thought + event.text)
                if settled:
                    self._settle(blocks, render.thought(settled), "text")
            case UsageReported() | PlanUpdated():
                pass  # shown by the moving part, from the tally
            case ToolCallUpdated():
                card = self._cards.get(event.call_id)
                if card is not None and event.content:
                    card.progress = event.content
            case _:
                self._flush(blocks)
                self._settled_event(event, blocks)
        return blocks

    def _settled_event(self, event: Event, blocks: list[RenderableType]) -> None:
        match event:
            case SessionStarted():
                self._settle(blocks, render.session(event), "other")
            case UserMessage():
                self._settle(blocks, render.prompt(event.text), "other")
            case ToolCallStarted():
                self._cards[event.call_id] = render.ToolCard(
                    started=event, call_id=event.call_id, started_at=self._now()
                )
            case ToolCallFinished():
                card = self._cards.pop(event.call_id, None) or render.ToolCard(
                    started=None, call_id=event.call_id
                )
                card.finished, card.finished_at = event, self._now()
                self._settle(blocks, self._card(card), "other")
            case FileChanged():
                self._settle(blocks, render.file_change(event, self.cwd), "other")
            case PermissionRequested():
                title = self.title_of(event.call_id)
                self._settle(blocks, render.permission_asked(event, title), "other")
            case PermissionResolved():
                name = self.tally.option_name(event.option_id)
                self._settle(blocks, render.permission_resolved(event, name), "other")
            case Notice():
                self._settle(blocks, render.notice(event), "other")
            case Unknown():
                self._settle(blocks, render.unknown(event), "other")

    def _card(self, card: render.ToolCard, now: float | None = None) -> RenderableType:
        return render.tool_card(
            card, now=now, frame=self._frame(now), verbose=self.verbose, cwd=self.cwd
        )

    def _frame(self, now: float | None) -> int:
        return int(now * _FRAMES_PER_SECOND) if now is not None else 0

    def moving(self) -> RenderableType:
        """What is still happening: streaming text, running tool calls, the plan, the footer."""
        now = self._now()
        parts: list[RenderableType] = []
        if self._thought.strip():
            parts.append(render.thought(self._thought))
        if self._text.strip():
            parts.append(render.answer(self._text))
        parts += [self._card(card, now) for card in self._cards.values()]
        tally = self.tally
        if tally.plan is not None:
            parts.append(render.plan(tally.plan))
        parts.append(
            render.footer(
                elapsed=self._elapsed(now),
                usage=tally.usage,
                tool_calls=tally.tool_calls,
                frame=self._frame(now),
                started=tally.session is not None,
            )
        )
        return Group(*parts)

    def close(self, resume: str | None = None) -> list[RenderableType]:
        """The end: what is left of the stream, the plan, the files changed, the outcome,
        and ``resume`` (e.g. ``gemini --resume <id>``) when the session can be continued."""
        blocks: list[RenderableType] = []
        self._flush(blocks)
        now = self._now()
        for card in self._cards.values():  # never finished: show them as they were
            self._settle(blocks, self._card(card, now), "other")
        self._cards.clear()
        tally = self.tally
        if tally.plan is not None:
            self._settle(blocks, render.plan(tally.plan), "other")
        if tally.files:
            blocks.append(Text(""))
            blocks.append(render.files_summary(list(tally.files.values()), self.cwd))
        if tally.turn is not None:
            blocks.append(Text(""))
            figures = tally.outcome_figures(tally.turn, self._elapsed(now))
            blocks.append(render.outcome(tally.turn, figures))
        if resume:
            blocks.append(render.resume(resume))
        return blocks
