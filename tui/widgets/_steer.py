"""The steering list: what the model will see next turn, to pin, forget or edit."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

KEYS = "↑↓ select · p pin/unpin · d forget · e edit"
KIND_MARKS = {"memory": "mem", "repo": "code", "history": "turn", "task": "task"}
LABEL_CELLS = 38  # one line in the inspector (48 columns less padding, border, scrollbar)


@dataclass(frozen=True)
class SteerItem:
    """One item the developer can steer (plain data the app builds from the engine)."""

    kind: str  # memory | repo | history | task
    source: str  # the section source: memory id, path::qualname, turn:N
    text: str
    tokens: int = 0
    pinned: bool = False
    in_context: bool = True  # in the latest context (else: a memory the backend holds)
    forgettable: bool = False
    editable: bool = False

    def label(self) -> Text:
        """One line: pinned (📌) or in the latest context (·), kind, tokens, then the
        location of code, else the text."""
        mark = "📌" if self.pinned else ("· " if self.in_context else "  ")
        shown = self.source if self.kind == "repo" else " ".join(self.text.split())
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{mark}{KIND_MARKS.get(self.kind, self.kind):4} ", style="bold")
        line.append(f"{self.tokens:>4} " if self.tokens else "     ", style="dim")
        line.append(shown or self.source)
        line.truncate(LABEL_CELLS, overflow="ellipsis")
        return line


class SteerList(OptionList):
    """Items of the next context; keys p, d, e ask the app to pin, forget or edit one."""

    DEFAULT_CSS = """
    SteerList { height: auto; max-height: 18; border: none; padding: 0; }
    """
    BINDINGS = [
        Binding("p", "steer('pin')", "Pin/unpin"),
        Binding("d", "steer('forget')", "Forget"),
        Binding("e", "steer('edit')", "Edit"),
    ]

    class Requested(Message):
        """The developer asked for ``op`` (pin, forget, edit) on ``item``."""

        def __init__(self, op: str, item: SteerItem) -> None:
            super().__init__()
            self.op = op
            self.item = item

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.items: list[SteerItem] = []

    def set_items(self, items: list[SteerItem]) -> None:
        """Replace the items, keeping the highlighted one where it can."""
        was = self.items[self.highlighted].source \
            if self.highlighted is not None and self.highlighted < len(self.items) else None
        self.items = list(items)
        self.clear_options()
        if not items:
            self.add_option(Option("nothing to steer yet: ask something first", disabled=True))
            return
        self.add_options([Option(item.label(), id=str(i)) for i, item in enumerate(items)])
        sources = [item.source for item in items]
        self.highlighted = sources.index(was) if was in sources else 0

    def action_steer(self, op: str) -> None:
        if self.highlighted is None or not self.items:
            return
        self.post_message(self.Requested(op, self.items[self.highlighted]))
