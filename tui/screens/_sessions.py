"""Pick a recorded session of this repository to resume."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from memory.transcript import read_transcript


def describe(path: Path) -> str:
    transcript = read_transcript(path)
    session = transcript.session or {}
    turns = transcript.of_type("turn")
    first = turns[0]["user"][:60] if turns else "(no turns)"
    return f"{path.stem}  {session.get('backend', '?'):6} {len(turns):3} turns  {first}"


class SessionPicker(ModalScreen[Path | None]):
    DEFAULT_CSS = """
    SessionPicker { align: center middle; }
    SessionPicker > OptionList { width: 100; height: auto; max-height: 70%;
        border: round $primary; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, sessions: list[Path]) -> None:
        super().__init__()
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        options = [Option(describe(p), id=str(i)) for i, p in enumerate(self.sessions)]
        yield OptionList(*options) if options else OptionList(Option("no recorded sessions",
                                                                    disabled=True))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sessions[int(event.option.id or 0)])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
