"""A/B: two backends answer the same query side by side; the user picks one."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Markdown, Static

from tui.diffview import fence_edit_blocks
from tui.widgets._acted import ActedOn


class AnswerPane(ActedOn, Vertical):
    """One side of an A/B comparison: the answer, its tool calls and, once chosen, what
    became of its edit."""

    DEFAULT_CSS = """
    AnswerPane { width: 1fr; height: auto; padding: 0 1; }
    AnswerPane Markdown { height: auto; }
    AnswerPane .meta { height: auto; }
    AnswerPane .tools { height: auto; display: none; }
    AnswerPane .edit { height: auto; display: none; }
    AnswerPane .diff { padding: 0; border: none; height: auto; }
    """

    def __init__(self, side: str, backend: str, *, name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.side = side
        self.backend = backend
        self._pending: list[str] = []
        self.text = ""

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble((f"{self.side}  ", "bold"), self.backend))
        yield Markdown("")
        yield Static("", classes="tools")
        yield Static("", classes="edit")
        yield Static("…", classes="meta")
        yield Button(f"Choose {self.side}", id=f"choose-{self.side.lower()}", disabled=True)

    def on_mount(self) -> None:
        self._timer = self.set_interval(1 / 12, self._flush)

    def push(self, piece: str) -> None:
        self._pending.append(piece)

    async def _flush(self) -> None:
        if self._pending:
            pieces, self._pending = self._pending, []
            chunk = "".join(pieces)
            self.text += chunk
            await self.query_one(Markdown).append(chunk)

    async def finish(self, text: str, meta: str) -> None:
        self._timer.stop()
        self._pending.clear()
        self.text = text
        await self.query_one(Markdown).update(fence_edit_blocks(text) if text
                                              else "_(no answer)_")
        self.query_one(".meta", Static).update(meta)


class ABView(Vertical):
    """The query and both answers; posts ``Chosen`` when a side is picked."""

    BINDINGS = [Binding("1", "choose('A')", "Choose A"), Binding("2", "choose('B')", "Choose B")]

    DEFAULT_CSS = """
    ABView { height: auto; margin: 0 0 1 0; }
    ABView > Horizontal { height: auto; }
    ABView > .user { height: auto; padding: 0 1; }
    """

    class Chosen(Message):
        def __init__(self, view: ABView, side: str) -> None:
            super().__init__()
            self.view = view
            self.side = side

    def __init__(self, query: str, backend_a: str, backend_b: str, *,
                 name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.query_text = query
        self.backends = (backend_a, backend_b)
        self.chosen: str | None = None
        self.ready = False  # both answers done: choosing is possible

    def compose(self) -> ComposeResult:
        yield Static(Text.assemble(("A/B  ", "bold"), self.query_text), classes="user")
        with Horizontal():
            yield AnswerPane("A", self.backends[0], id="pane-a")
            yield AnswerPane("B", self.backends[1], id="pane-b")

    def pane(self, side: str) -> AnswerPane:
        return self.query_one(f"#pane-{side.lower()}", AnswerPane)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        side = "A" if event.button.id == "choose-a" else "B"
        self.choose(side)

    def await_choice(self) -> None:
        """Both answers are done: enable choosing, and take the focus so that 1 and 2 choose."""
        self.ready = True
        for button in self.query(Button):
            button.disabled = False
        self.pane("A").query_one(Button).focus()

    def cancel(self) -> None:
        """The comparison was cancelled: nothing to choose."""
        self.chosen = "-"
        for pane in (self.pane("A"), self.pane("B")):
            pane.query_one(".meta", Static).update("cancelled (Esc): not recorded")

    def action_choose(self, side: str) -> None:
        self.choose(side)

    def choose(self, side: str) -> None:
        if self.chosen is not None or not self.ready:
            return
        self.chosen = side
        self.pane(side).add_class("-chosen")
        for button in self.query(Button):
            button.disabled = True
            mine = button.id == f"choose-{side.lower()}"
            button.label = "Kept" if mine else "Not kept"
        self.post_message(self.Chosen(self, side))
