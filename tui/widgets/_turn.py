"""One exchange in the chat: the user's text, the answer streamed as Markdown, a line per
tool call the model made, and what became of the edit it proposed."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Click
from textual.message import Message
from textual.widgets import Markdown, Static

from tui.diffview import fence_edit_blocks
from tui.widgets._acted import ActedOn

STREAM_INTERVAL = 1 / 12  # seconds between stream flushes: batched, so the UI never stalls


class TurnView(ActedOn, Vertical):
    """A user query and its answer; pieces arrive from any thread and are flushed in batches."""

    DEFAULT_CSS = """
    TurnView { height: auto; margin: 0 0 1 0; }
    TurnView .user { padding: 0 1; height: auto; }
    TurnView .answer { padding: 0 1; height: auto; margin: 0; }
    TurnView .meta { padding: 0 1; height: auto; }
    TurnView .tools { padding: 0 1; height: auto; display: none; }
    TurnView .edit { padding: 0 1; height: auto; display: none; }
    TurnView .diff { margin: 0 1; padding: 0; border: none; height: auto; }
    """

    class Selected(Message):
        """The user clicked this turn (the inspector shows its context)."""

        def __init__(self, turn_view: TurnView) -> None:
            super().__init__()
            self.turn_view = turn_view

    def __init__(self, query: str, *, label: str = "", name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.query_text = query
        self.label = label
        self.answer_text = ""
        self.turn = None  # the memory.types.Turn once finished
        self.pack = None  # the ContextPack that produced it
        self._pending: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((f"{self.label}  ", "bold") if self.label else "",
                                   self.query_text), classes="user")
        yield Markdown("", classes="answer")
        yield Static("", classes="tools")
        yield Static("", classes="edit")
        yield Static("…", classes="meta")

    def on_mount(self) -> None:
        self._timer = self.set_interval(STREAM_INTERVAL, self._flush)

    def push(self, piece: str) -> None:
        """Queue a streamed piece; safe from any thread (list.append is atomic)."""
        self._pending.append(piece)

    async def _flush(self) -> None:
        if not self._pending:
            return
        pieces, self._pending = self._pending, []
        chunk = "".join(pieces)
        self.answer_text += chunk
        await self.query_one(".answer", Markdown).append(chunk)

    async def finish(self, text: str, meta: str, error: str | None = None) -> None:
        """Render the final answer once from its source, and the turn's figures."""
        self._timer.stop()
        self._pending.clear()
        self.answer_text = text
        body = fence_edit_blocks(text) if text else ("_(no answer)_" if error is None else "")
        if error:
            body += f"\n\n**error:** {error}"
            self.add_class("-error")
        await self.query_one(".answer", Markdown).update(body)
        self.query_one(".meta", Static).update(meta)

    @on(Click)
    def _clicked(self) -> None:
        self.post_message(self.Selected(self))
