"""What a widget holding an answer shows of the answer's work: a line per tool call
and what became of its edit (with the diff folded under it). Used by a chat turn and by
an A/B pane (the chosen answer's edit is proposed there). The widget composes the
``.tools`` and ``.edit`` Statics; both stay hidden until there is something to say."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static


class ActedOn(Widget):
    def show_tools(self, lines: list[str]) -> None:
        """A line per tool call of the turn (tui/calls.py); none: hidden."""
        tools = self.query_one(".tools", Static)
        tools.update(Text("\n".join(lines)))
        tools.display = bool(lines)

    def show_edit(self, text: str | Text, outcome: str = "") -> None:
        """What became of the answer's edit; ``outcome`` (proposed, applied, rejected,
        refused, undone) becomes the class ``-<outcome>`` the theme colours."""
        edit = self.query_one(".edit", Static)
        for old in [c for c in edit.classes if c.startswith("-")]:
            edit.remove_class(old)
        if outcome:
            edit.add_class(f"-{outcome}")
        edit.update(text if isinstance(text, Text) else Text(text))
        edit.display = bool(str(text))

    async def show_diff(self, diff: Text) -> None:
        """The edit's diff, folded under its line (a click or Enter unfolds it)."""
        for old in self.query(".diff"):
            await old.remove()
        from textual.widgets import Collapsible

        fold = Collapsible(Static(diff, classes="diff-body"), title="diff", collapsed=True,
                           classes="diff")
        await self.mount(fold, after=self.query_one(".edit", Static))
