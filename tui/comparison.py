"""A/B in the app: two backends answer the same query side by side, the user keeps one.

Both panes stream in view; choosing is possible only once both answers are done. Each
pane lists its answer's tool calls; the kept answer's edit is then proposed in its pane
as any answer's is (``edits``: the app's ``EditFlow``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

from textual.containers import VerticalScroll

from tui.calls import tool_lines
from tui.host import Host
from tui.inspection import turn_meta
from tui.widgets._prompt import PromptArea


class Comparison:
    """The A/B worker and the choice. The host's chat is reached through ``mount`` (a
    widget into the chat, returning the chat) and ``following`` (keeps its end in view);
    ``usage(turn)`` updates the status bar, ``report_memory`` the memory health,
    ``edits`` shows tool calls and proposes the kept answer's edit."""

    def __init__(self, host: Host, *, mount: Callable[[Any], Awaitable[VerticalScroll]],
                 following: Callable[[VerticalScroll], AbstractContextManager[None]],
                 usage: Callable[[Any], None], report_memory: Callable[[], None],
                 edits: Any = None) -> None:
        self.host = host
        self._mount, self._following = mount, following
        self._usage, self._report_memory = usage, report_memory
        self._edits = edits  # tui.edits.EditFlow
        # turns, backends and panes to choose among
        self._state: tuple[list[Any], list[Any], list[Any]] | None = None

    @property
    def awaiting_choice(self) -> bool:
        return self._state is not None

    def run_ab(self, query: str, name_a: str, name_b: str) -> None:
        self.host.run_worker(partial(self._run_ab, query, name_a, name_b), name="run_ab",
                             group="answer", exit_on_error=False)

    async def _run_ab(self, query: str, name_a: str, name_b: str) -> None:
        from tui.widgets._ab import ABView

        host, ops = self.host, self.host.operations
        view = ABView(query, name_a, name_b)
        chat = await self._mount(view)
        panes = [view.pane("A"), view.pane("B")]
        try:
            backends = []
            for name in (name_a, name_b):
                with ops.shown(f"A/B: catching {name} up"):
                    backends.append(await host.engine.run(
                        host.agent.prepare(name, ops.progress())))
            with ops.shown(f"A/B: {name_a} and {name_b} answering"), self._following(chat):
                turns = await host.engine.run(
                    host.agent.ab(query, backends, [p.push for p in panes]))
        except asyncio.CancelledError:
            view.cancel()
            host.notify("A/B cancelled: nothing recorded", severity="warning")
            raise
        for pane, turn in zip(panes, turns, strict=True):
            await pane.finish(turn.assistant + (f"\n\n**error:** {turn.error}"
                                                if turn.error else ""), turn_meta(turn))
            pane.show_tools(tool_lines(turn.meta))
        self._state = (turns, backends, panes)
        view.await_choice()  # enables choosing; focus moves to the panes: 1 / 2 choose
        chat.scroll_end(animate=False)
        host.notify("press 1 or 2 (or click) to choose the better answer")

    def commit_choice(self, side: str) -> None:
        self.host.run_worker(partial(self._commit_choice, side), name="commit_choice",
                             group="answer")

    async def _commit_choice(self, side: str) -> None:
        if self._state is None:
            return
        host = self.host
        turns, backends, panes = self._state
        self._state = None
        choice = 0 if side == "A" else 1
        chosen = await host.engine.run(host.agent.choose(turns, choice, backends))
        self._usage(chosen)
        if self._edits is not None:  # the kept answer's edit, asked about in its pane
            await self._edits.after_turn(panes[choice], chosen)
        host.query_one(PromptArea).focus()
        host.notify(f"kept {side} ({chosen.backend}); both backends observed it")
        self._report_memory()
