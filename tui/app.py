"""The engram app: chat with a repository, switch memory backends live, compare them.

The UI thread only renders; all engine work runs on ``EngineLoop`` (tui/engine.py).
Slow operations run in workers shown in the task bar; Esc cancels them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from themes import DEFAULT_THEME, STYLESHEET, THEMES
from tui.background import Background
from tui.calls import tool_lines
from tui.comparison import Comparison
from tui.config import load_config
from tui.edits import EditFlow
from tui.engine import EngineLoop
from tui.handlers import SlashHandlers, backend_names, theme_names
from tui.health import MemoryHealth
from tui.inspection import memory_rows, turn_meta, turn_notes
from tui.operations import Operations
from tui.options import AppOptions
from tui.steering import Steering
from tui.widgets._inspector import Inspector
from tui.widgets._prompt import PromptArea
from tui.widgets._status import StatusBar
from tui.widgets._task import TaskBar

# Imported after the first frame (Markdown, the command palette): see _lazy().
if TYPE_CHECKING:
    from tui.widgets._ab import ABView
    from tui.widgets._steer import SteerList
    from tui.widgets._turn import TurnView

__all__ = ["AppOptions", "EngramApp"]

WELCOME = (
    "[b]engram[/b] · ask anything about [b]{repo}[/b]\n\n"
    "Enter sends, ctrl+j adds a line. The memory backend ([b]{backend}[/b]) decides what the "
    "model sees: [b]/backend NAME[/b] switches it, [b]/ab A B[/b] compares two, "
    "[b]F2[/b] shows the context of a turn, [b]F4[/b] steers the next one (pin, forget, "
    "edit), [b]F1[/b] lists keys and commands, "
    "[b]Esc[/b] cancels a slow operation. An answer that edits files shows the diff first "
    "([b]y[/b] applies and commits, [b]n[/b] rejects); [b]/undo[/b] reverts it."
)


def _engram_commands() -> type:
    from tui.commands import EngramCommands

    return EngramCommands


def _turn_view() -> type[TurnView]:
    from tui.widgets._turn import TurnView

    return TurnView


async def _open_session(options: AppOptions, transcript: Path | None) -> Any:
    """Runs on the engine loop: the engine's modules are imported there, not on the UI's."""
    from tui.session import open_app_session

    return await open_app_session(options, transcript)


class EngramApp(App[None]):
    """Chat about a git repository with a pluggable conversational memory.

    The controllers it owns (background work, slash commands, A/B, steering) are handed
    the app typed as a narrow protocol (tui/host.py) and never import it."""

    CSS_PATH = ["app.tcss", str(STYLESHEET)]
    COMMANDS = App.COMMANDS | {_engram_commands}
    TITLE = "engram"
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "toggle_inspector", "Inspector"),
        Binding("f3", "cycle_backend", "Next backend"),
        Binding("f4", "steer", "Steer memory"),
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, options: AppOptions) -> None:
        super().__init__()
        self.options = options
        self.engine = EngineLoop()
        self.agent: Any = None  # memory.turn.agent.Agent once booted
        self.home: Path | None = None
        self.session_id = ""
        self.submissions = 0  # prompts handled so far (a driver waits on it)
        self._booted = asyncio.Event()
        self._boot_error = ""
        self._warming = False
        self._resumed_tokens = 0
        self.operations = Operations(lambda: self.query_one(TaskBar))
        self.health = MemoryHealth(self)
        self.background = Background(self)
        self.steering = Steering(self)
        self.edits = EditFlow(self)  # tools, edits, consent, /undo
        self.comparison = Comparison(self, mount=self.mount_in_chat, following=self.following,
                                     usage=self._update_usage, report_memory=self.health.report,
                                     edits=self.edits)
        self.slash = SlashHandlers(self, refresh_steering=self.steering.refresh,
                                   report_memory=self.health.report, edits=self.edits)

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            with VerticalScroll(id="chat"):
                yield Static(WELCOME.format(repo=self.options.repo.resolve().name,
                                            backend=self.options.backend), id="welcome")
            yield Inspector(id="inspector")
        yield TaskBar(id="task")
        yield PromptArea(id="prompt")

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        wanted = load_config().get("theme", DEFAULT_THEME)
        self.theme = wanted if wanted in self.available_themes else DEFAULT_THEME
        self.query_one(Inspector).display = False
        status = self.query_one(StatusBar)
        status.repo = self.options.repo.resolve().name
        status.backend = self.options.backend
        status.index = "…"
        self.query_one(PromptArea).focus()
        self.call_after_refresh(self._start)  # the first frame is painted before engine work

    def _start(self) -> None:
        self.boot(self.options.transcript)
        self.background.index_repo()  # concurrently: the index needs no session

    @property
    def backend_name(self) -> str:
        return self.agent.backend.name if self.agent else self.options.backend

    def backend_names(self) -> list[str]:
        return backend_names()

    def theme_names(self) -> list[str]:
        return theme_names()

    @property
    def operation(self) -> str:
        """The slow operation under way ("" when idle)."""
        return self.operations.what

    @property
    def ab_pending(self) -> tuple[str, str] | None:
        """The two backends /ab named for the next query, if any."""
        return self.slash.ab_pending

    @property
    def quitting(self) -> bool:
        """Ctrl+Q was pressed while the session's summary is kept: the next one quits."""
        return self.slash.quitting

    @quitting.setter
    def quitting(self, value: bool) -> None:
        self.slash.quitting = value

    async def run_slash(self, text: str) -> None:
        await self.slash.run(text)

    def action_cancel(self) -> None:
        self.operations.cancel()

    # -- boot ---------------------------------------------------------------------
    @work(exclusive=True, group="boot")
    async def boot(self, transcript: Path | None = None) -> None:
        status = self.query_one(StatusBar)
        what = "opening the session" if transcript is None and not self.options.continue_last \
            else "resuming the session"
        with self.operations.shown(what, cancellable=False):
            try:
                if transcript is None and self.options.continue_last:
                    from memory.home import repo_home
                    from memory.transcript import latest_session
                    from tui.session import repo_root

                    root = await self.engine.run(asyncio.to_thread(repo_root, self.options.repo))
                    transcript = latest_session(repo_home(root, self.options.data_dir))
                booted = await self.engine.run(_open_session(self.options, transcript))
            except Exception as exc:
                self._boot_error = str(exc)
                self.edits.problem = f"engram could not start ({exc})"
                status.note = "not ready"
                self.notify(str(exc), title="engram cannot start", severity="error", timeout=30)
                return
        self.agent, self.home, self.session_id = booted.agent, booted.home, booted.session_id
        status.branch, status.head = booted.branch, booted.head[:8]
        status.model, status.backend = self.agent.llm.model, self.agent.backend.name
        status.note = ""
        chat = self.query_one("#chat", VerticalScroll)
        if self.agent.turns:
            await chat.remove_children()
        for turn in self.agent.turns:
            view = _turn_view()(turn.user, label=f"#{turn.index}")
            await chat.mount(view)
            view.turn = turn
            await view.finish(turn.assistant, turn_meta(turn), turn.error)
            view.show_tools(tool_lines(turn.meta))
        self._resumed_tokens = sum(t.usage.tokens for t in self.agent.turns)
        if self.agent.turns:
            chat.scroll_end(animate=False)  # open on the latest turn
            self.call_after_refresh(chat.scroll_end, animate=False)
            self.notify(f"resumed {len(self.agent.turns)} turns of session {self.session_id}")
        self._update_usage(self.agent.turns[-1] if self.agent.turns else None)
        if self.background.index is not None:
            self.agent.env.repo = self.background.index
        await self.edits.attach(self.agent, list(chat.query(_turn_view())))
        self._booted.set()
        if self.options.pick_session and transcript is None:
            self.action_sessions()

    # -- the embedded model, loaded in the background from the first keystroke ----------
    @on(PromptArea.Changed)  # handlers stay on the App class: mixins are not scanned for @on
    def _first_keystroke(self) -> None:
        if not self._warming:
            self._warming = True
            self.background.warm_model()

    # -- queries ------------------------------------------------------------------
    def prefill(self, text: str) -> None:
        prompt = self.query_one(PromptArea)
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()

    @on(PromptArea.Submitted)
    async def _submitted(self, event: PromptArea.Submitted) -> None:
        try:
            await self._take(event)
        finally:
            self.submissions += 1

    async def _take(self, event: PromptArea.Submitted) -> None:
        if event.text.startswith("/"):
            await self.run_slash(event.text)  # quick; a slow command starts a worker
            return
        refusal = self._refusal()
        if refusal:
            # refused, never queued behind the operation: the query goes back to the prompt
            if not self.query_one(PromptArea).text.strip():
                self.prefill(event.text)
            self.notify(f"not sent: {refusal}. Your query is back in the prompt.",
                        severity="warning")
        elif self.slash.ab_pending:
            self.comparison.run_ab(event.text, *self.slash.ab_pending)
            self.slash.ab_pending = None
        else:
            self.ask(event.text)

    def _refusal(self) -> str:
        if self._boot_error:
            return f"engram could not start ({self._boot_error})"
        if not self._booted.is_set() or self.agent is None:
            return "engram is still starting"
        if self.operation:
            return f"{self.operation} (Esc cancels)"
        if self.comparison.awaiting_choice:
            return "choose the better A/B answer first (1 or 2)"
        return ""

    def _update_usage(self, turn: Any = None) -> None:
        status = self.query_one(StatusBar)
        if turn is not None:
            status.last_tokens = turn.usage.tokens
        status.session_tokens = self._resumed_tokens + self.agent.llm.ledger.tokens
        status.cost = self.agent.llm.ledger.cost

    async def mount_in_chat(self, widget: Any) -> VerticalScroll:
        chat = self.query_one("#chat", VerticalScroll)
        for welcome in chat.query("#welcome"):
            await welcome.remove()
        await chat.mount(widget)
        chat.scroll_end(animate=False)
        return chat

    @contextmanager
    def following(self, chat: VerticalScroll) -> Iterator[None]:
        """Keep the end of the chat in view while an answer streams."""
        timer = self.set_interval(0.2, lambda: chat.scroll_end(animate=False))
        try:
            yield
        finally:
            timer.stop()
            chat.scroll_end(animate=False)

    @work(group="answer", exit_on_error=False)
    async def ask(self, query: str) -> None:
        view = _turn_view()(query, label=f"#{len(self.agent.turns)}")
        chat = await self.mount_in_chat(view)
        if self.agent.env.repo is None:
            self.notify("the index is not ready yet: answering without repository code",
                        severity="warning")
        self.edits.watch(view)
        with self.operations.shown(f"answering with {self.backend_name}"), \
                self.following(chat):
            try:
                turn = await self.engine.run(self.agent.ask(query, on_token=view.push))
            except asyncio.CancelledError:
                self.edits.watch(None)  # its tool calls no longer go to this turn
                await view.finish(view.answer_text + "".join(view._pending),
                                  "cancelled (Esc): not recorded")
                raise
        view.turn, view.pack = turn, self.agent.last_pack
        await view.finish(turn.assistant, turn_meta(turn), turn.error)
        if turn.error:
            self.notify(turn.error, title="answer failed", severity="error", timeout=15)
        self._update_usage(turn)
        self.health.report()
        self.show_inspector(view)
        await self.edits.after_turn(view, turn)

    # -- actions ------------------------------------------------------------------
    def action_help(self) -> None:
        from tui.screens import HelpScreen

        self.push_screen(HelpScreen())

    def action_toggle_inspector(self) -> None:
        inspector = self.query_one(Inspector)
        inspector.display = not inspector.display
        views = list(self.query(_turn_view()))
        if inspector.display and views:
            self.show_inspector(views[-1])

    async def action_cycle_backend(self) -> None:
        names = self.backend_names()
        if self.agent is not None and names:
            following = names[(names.index(self.backend_name) + 1) % len(names)] \
                if self.backend_name in names else names[0]
            await self.run_slash(f"/backend {following}")

    def action_sessions(self) -> None:
        if self.home is None:
            self.notify("engram is still starting", severity="warning")
            return
        sessions = sorted((self.home / "sessions").glob("*.jsonl"),
                          key=lambda p: p.stat().st_mtime, reverse=True)

        from tui.screens import SessionPicker

        def picked(path: Path | None) -> None:
            if path is not None:
                self._booted.clear()
                self.boot(path)

        self.push_screen(SessionPicker(sessions), picked)

    def action_steer(self) -> None:
        """Show the inspector and focus its next-context list."""
        if not self.query_one(Inspector).display:
            self.action_toggle_inspector()
        self.steering.focus()

    def on_steer_list_requested(self, event: SteerList.Requested) -> None:
        self.steering.requested(event.item, event.op)

    def on_abview_chosen(self, event: ABView.Chosen) -> None:
        self.comparison.commit_choice(event.side)

    def on_turn_view_selected(self, event: TurnView.Selected) -> None:
        for view in self.query(_turn_view()):
            view.set_class(view is event.turn_view, "-selected")
        inspector = self.query_one(Inspector)
        inspector.display = True
        self.show_inspector(event.turn_view)

    def show_inspector(self, view: TurnView) -> None:
        inspector = self.query_one(Inspector)
        self.steering.refresh()
        if not inspector.display or view.turn is None:
            return
        turn = view.turn
        if view.pack is not None:
            sections = [{**s.summary(), "text": s.text} for s in view.pack.sections]
        else:
            sections = list(turn.context)
        backend = self.agent.backend if self.agent else None
        inspector.show(f"turn #{turn.index} · {turn.backend} · {turn.latency_ms} ms",
                       sections, memory_rows(backend), turn_notes(self.agent, turn))

    async def action_quit(self) -> None:
        self.slash.quit_keeping_summary()

    def on_unmount(self) -> None:
        if self.agent is not None and self.agent.transcript is not None:
            self.agent.transcript.close()
        self.engine.stop()
