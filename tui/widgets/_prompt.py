"""The query input: multi-line, Enter sends, ctrl+j adds a line, up/down walk history."""

from __future__ import annotations

from textual.binding import Binding
from textual.events import Key
from textual.message import Message
from textual.widgets import TextArea


class PromptArea(TextArea):
    """A TextArea that submits on Enter and remembers what was sent."""

    DEFAULT_CSS = "PromptArea { height: auto; max-height: 8; min-height: 3; }"
    BINDINGS = [Binding("ctrl+j", "newline", "New line", show=False)]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes, soft_wrap=True,
                         show_line_numbers=False,
                         placeholder="Ask about the repository · Enter sends · ctrl+j new line · "
                                     "/help · F1")
        self.sent: list[str] = []
        self._cursor = 0

    async def _on_key(self, event: Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text.strip()
            if text:
                self.sent.append(text)
                self._cursor = len(self.sent)
                self.clear()
                self.post_message(self.Submitted(text))
            return
        if event.key in ("up", "down") and self.sent:
            row = self.cursor_location[0]
            last_row = self.document.line_count - 1
            if (event.key == "up" and row == 0) or (event.key == "down" and row == last_row):
                event.stop()
                event.prevent_default()
                step = -1 if event.key == "up" else 1
                self._cursor = max(0, min(len(self.sent), self._cursor + step))
                value = self.sent[self._cursor] if self._cursor < len(self.sent) else ""
                self.load_text(value)
                self.move_cursor(self.document.end)
                return
        await super()._on_key(event)

    def action_newline(self) -> None:
        self.insert("\n")
