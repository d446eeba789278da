"""Edit a memory's text in a modal with a text area."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea


class EditScreen(ModalScreen[str | None]):
    """Dismisses with the new text (ctrl+s), or None (Esc)."""

    DEFAULT_CSS = """
    EditScreen { align: center middle; }
    EditScreen > Vertical { width: 90; height: auto; max-height: 80%; border: round $primary;
        background: $surface; padding: 0 1; }
    EditScreen TextArea { height: 10; }
    """
    BINDINGS = [Binding("ctrl+s", "save", "Save", priority=True),
                Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            box.border_subtitle = "ctrl+s saves · Esc cancels"
            yield Static("The memory's new text:")
            yield TextArea(self.text, id="memory-text", soft_wrap=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)
