"""The edit an answer proposes, as a coloured diff: y applies it (one git commit), n or
Esc rejects it (nothing written)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.diffview import DiffColours, diff_stats, diff_text, theme_colours


class DiffScreen(ModalScreen[bool]):
    """Dismisses with True (apply) or False (reject)."""

    DEFAULT_CSS = """
    DiffScreen { align: center bottom; }
    DiffScreen > Vertical { width: 90%; height: auto; max-height: 70%; margin-bottom: 3;
        border: round $accent; background: $surface; padding: 0 1; }
    DiffScreen #diff-head { height: auto; margin-bottom: 1; }
    DiffScreen #diff-scroll { height: auto; max-height: 30; }
    DiffScreen #diff-body { height: auto; }
    """
    BINDINGS = [Binding("y", "answer(True)", "Apply"),
                Binding("n,escape", "answer(False)", "Reject")]

    def __init__(self, diff: str, paths: list[str], title: str = "") -> None:
        super().__init__()
        self.diff = diff
        self.paths = paths
        self.title_text = title

    def compose(self) -> ComposeResult:
        added, removed = diff_stats(self.diff)
        files = ", ".join(self.paths) or "no file"
        with Vertical() as box:
            box.border_title = self.title_text or "apply this edit?"
            box.border_subtitle = "y applies and commits · n or Esc rejects (nothing written)"
            colours = self._colours()
            yield Static(Text.assemble((f"{len(self.paths)} file(s)", "bold"), f": {files}  ",
                                       (f"+{added}", colours.added), " ",
                                       (f"-{removed}", colours.removed)), id="diff-head")
            with VerticalScroll(id="diff-scroll"):
                yield Static(diff_text(self.diff, colours), id="diff-body")

    def _colours(self) -> DiffColours:
        return theme_colours(self.app.current_theme)

    def on_mount(self) -> None:
        self.query_one("#diff-scroll").focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
