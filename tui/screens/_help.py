"""Keys and slash commands (F1, /help)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.slash import help_text

KEYS = """\
enter        send the query          ctrl+j      new line in the query
up / down    query history           ctrl+p      command palette
f1           this help               f2          context inspector
f3           switch backend (cycle)  1 / 2       choose A or B in an A/B turn
f4           steer the next context  esc         cancel a slow operation
ctrl+q       quit

In the inspector's next-context list (F4): p pins or unpins an item (always in the
next contexts), d forgets a memory (asks first), e edits a memory's text.

An answer's edit is shown as a diff: y applies it (one git commit), n or Esc
rejects it (nothing written); /undo reverts the last applied one; /autoapply on
applies without asking. Before a command runs (in the sandbox): o allows it once,
s for this session, d or Esc denies it."""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; height: auto; max-height: 80%;
        border: round $primary; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_subtitle = "Esc, F1 or q closes"
            yield Static("[b]Keys[/b]\n" + KEYS + "\n\n[b]Commands[/b]\n"
                         + help_text().replace("[", r"\["))
