"""Pick a recorded session of this repository to resume."""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from memory.transcript import read_transcript


def describe(path: Path) -> str:
    """One line: when, the backend it ended on, turns (A/B turns), and its first query."""
    transcript = read_transcript(path)
    session = transcript.session
    turns = transcript.turns
    switches = transcript.switches
    backend = switches[-1].to if switches else (session.backend if session else "") or "?"
    started = session.started if session is not None else None
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(started)) \
        if started is not None else "????-??-?? ??:??"
    ab = len(transcript.comparisons)
    counts = f"{len(turns):3} turns" + (f" ({ab} A/B)" if ab else "")
    title = " ".join(turns[0].user.split())[:50] if turns else "(no turns)"
    bad = f"  [{len(transcript.problems)} bad lines skipped]" if transcript.problems else ""
    return f"{when}  {backend[:20]:8} {counts:16} {title}{bad}"


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
        listing = OptionList(*options) if options else OptionList(
            Option("no recorded sessions", disabled=True))
        listing.border_title = "Sessions of this repository"
        listing.border_subtitle = "Enter resumes · Esc closes"
        yield listing

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sessions[int(event.option.id or 0)])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
