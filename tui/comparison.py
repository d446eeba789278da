"""A/B in the app: two backends answer the same query side by side, the user keeps one.

Both panes stream in view; choosing is possible only once both answers are done."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work

from tui.widgets._prompt import PromptArea

if TYPE_CHECKING:
    from tui.app import EngramApp
    from tui.widgets._ab import ABView


class Comparison:
    """Mixed into ``EngramApp``: the A/B worker and the choice."""

    @work(group="answer", exit_on_error=False)
    async def run_ab(self: EngramApp, query: str, name_a: str, name_b: str) -> None:
        from tui.widgets._ab import ABView

        view = ABView(query, name_a, name_b)
        chat = await self.mount_in_chat(view)
        panes = [view.pane("A"), view.pane("B")]
        try:
            backends = []
            for name in (name_a, name_b):
                with self.operation_shown(f"A/B: catching {name} up"):
                    backends.append(await self.engine.run(
                        self.agent.prepare(name, self.progress_callback())))
            with self.operation_shown(f"A/B: {name_a} and {name_b} answering"), \
                    self.following(chat):
                turns = await self.engine.run(
                    self.agent.ab(query, backends, [p.push for p in panes]))
        except asyncio.CancelledError:
            view.cancel()
            self.notify("A/B cancelled: nothing recorded", severity="warning")
            raise
        for pane, turn in zip(panes, turns, strict=True):
            await pane.finish(turn.assistant + (f"\n\n**error:** {turn.error}"
                                                if turn.error else ""), self._meta(turn))
        self._ab_state = (turns, backends)
        view.await_choice()  # enables choosing; focus moves to the panes: 1 / 2 choose
        chat.scroll_end(animate=False)
        self.notify("press 1 or 2 (or click) to choose the better answer")

    def on_abview_chosen(self: EngramApp, event: ABView.Chosen) -> None:
        self.commit_choice(event.side)

    @work(group="answer")
    async def commit_choice(self: EngramApp, side: str) -> None:
        if self._ab_state is None:
            return
        turns, backends = self._ab_state
        self._ab_state = None
        choice = 0 if side == "A" else 1
        chosen = await self.engine.run(self.agent.choose(turns, choice, backends))
        self._update_usage(chosen)
        self.query_one(PromptArea).focus()
        self.notify(f"kept {side} ({chosen.backend}); both backends observed it")
        self.report_memory_issues()
