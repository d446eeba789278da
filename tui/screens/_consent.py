"""The model asks to run a command: once, for this session, or not at all (Esc). The
modal says who asks: in an A/B, which answer (pane) and its backend and model."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from memory.acting.tools.consent import Decision

WHERE = ("The sandbox: a copy of the working tree, without network, without "
         "your home, with a timeout; nothing is written back.")


class ConsentScreen(ModalScreen[Decision]):
    """Dismisses with the developer's ``Decision``; Esc denies."""

    DEFAULT_CSS = """
    ConsentScreen { align: center middle; }
    ConsentScreen > Vertical { width: 80; height: auto; border: round $warning;
        background: $surface; padding: 1 2; }
    ConsentScreen #consent-command { margin: 1 0; color: $accent; text-style: bold; }
    ConsentScreen Horizontal { height: auto; margin-top: 1; }
    ConsentScreen Button { margin-right: 2; }
    """
    BINDINGS = [Binding("o,y", "answer('once')", "Once"),
                Binding("s,a", "answer('session')", "This session"),
                Binding("d,n,escape", "answer('deny')", "Deny")]

    def __init__(self, command: str, asking: str = "") -> None:
        super().__init__()
        self.command = command
        self.asking = asking  # who asks: "answer A of the A/B (backend rag, model ...)"

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "run a command?"
            box.border_subtitle = "o once · s for this session · d or Esc denies"
            who = (self.asking or "the model").replace("[", r"\[")
            yield Static(f"{who[0].upper()}{who[1:]} asks: run this command in the sandbox?",
                         id="consent-asking")
            yield Static(f"$ {self.command}".replace("[", r"\["), id="consent-command")
            yield Static(WHERE)
            with Horizontal():
                yield Button("Once (o)", variant="primary", id="once")
                yield Button("This session (s)", id="session")
                yield Button("Deny (d)", variant="error", id="deny")

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(Decision(event.button.id or "deny"))

    def action_answer(self, answer: str) -> None:
        self.dismiss(Decision(answer))
