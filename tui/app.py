"""The engram app: chat with a repository, switch memory backends live, compare them.

The UI thread only renders; all engine work runs on ``EngineLoop`` (tui/engine.py).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll

from themes import DEFAULT_THEME, STYLESHEET, THEMES
from tui.config import load_config, save_config
from tui.engine import EngineLoop
from tui.slash import SlashError, parse
from tui.widgets._inspector import Inspector, MemoryRow
from tui.widgets._prompt import PromptArea
from tui.widgets._status import StatusBar

# Imported after the first frame (Markdown, the command palette): see _lazy().
if TYPE_CHECKING:
    from tui.widgets._ab import ABView
    from tui.widgets._turn import TurnView


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


def _build_index(options: AppOptions, progress: Any) -> Any:
    """Runs in a thread: imports and builds off the UI thread."""
    from tui.session import build_index

    return build_index(options, progress)


def _local_model_name(model: str | None) -> str | None:
    """``smollm2`` for ``local/smollm2``; None for a remote model."""
    if model is None:
        from memory.llm import default_model

        model = default_model()
    return model.split("/", 1)[1] if model.startswith("local/") else None


@dataclass(frozen=True)
class AppOptions:
    repo: Path = Path(".")
    backend: str = "full"
    model: str | None = None
    data_dir: Path | None = None
    continue_last: bool = False
    pick_session: bool = False
    max_tokens: int = 512


class EngramApp(App[None]):
    """Chat about a git repository with a pluggable conversational memory."""

    CSS_PATH = ["app.tcss", str(STYLESHEET)]
    COMMANDS = App.COMMANDS | {_engram_commands}
    TITLE = "engram"
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "toggle_inspector", "Inspector"),
        Binding("f3", "cycle_backend", "Next backend"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, options: AppOptions) -> None:
        super().__init__()
        self.options = options
        self.engine = EngineLoop()
        self.agent: Any = None  # memory.agent.Agent once booted
        self.home: Path | None = None
        self.session_id = ""
        self.ab_pending: tuple[str, str] | None = None
        self.ab_view: ABView | None = None
        self._ab_state: tuple[list[Any], list[Any]] | None = None
        self._busy = False
        self._booted = asyncio.Event()
        self._warming = False
        self._index: Any = None  # memory.repo.RepoIndex once built

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="main"):
            yield VerticalScroll(id="chat")
            yield Inspector(id="inspector")
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
        status.note = "starting…"
        self.query_one(PromptArea).focus()
        self.call_after_refresh(self._start)  # the first frame is painted before engine work

    def _start(self) -> None:
        self.boot()
        self.index_repo()  # concurrently: the index needs no session

    @property
    def backend_name(self) -> str:
        return self.agent.backend.name if self.agent else self.options.backend

    def backend_names(self) -> list[str]:
        from memory.backends import registry

        return registry.names()

    def theme_names(self) -> list[str]:
        return [t.name for t in THEMES]

    # -- boot ---------------------------------------------------------------------
    @work(exclusive=True, group="boot")
    async def boot(self, transcript: Path | None = None) -> None:
        status = self.query_one(StatusBar)
        try:
            if transcript is None and self.options.continue_last:
                from memory.home import repo_home
                from memory.transcript import latest_session
                from tui.session import repo_root

                root = await self.engine.run(asyncio.to_thread(repo_root, self.options.repo))
                transcript = latest_session(repo_home(root, self.options.data_dir))
            booted = await self.engine.run(_open_session(self.options, transcript))
        except Exception as exc:
            status.note = "not ready"
            self.notify(str(exc), title="engram cannot start", severity="error", timeout=30)
            return
        self.agent, self.home, self.session_id = booted.agent, booted.home, booted.session_id
        status.branch, status.head = booted.branch, booted.head[:8]
        status.model, status.backend = self.agent.llm.model, self.agent.backend.name
        status.note = ""
        chat = self.query_one("#chat", VerticalScroll)
        await chat.remove_children()
        for turn in self.agent.turns:
            view = _turn_view()(turn.user, label=f"#{turn.index}")
            await chat.mount(view)
            view.turn = turn
            await view.finish(turn.assistant, self._meta(turn), turn.error)
        if self.agent.turns:
            self.notify(f"resumed {len(self.agent.turns)} turns of session {self.session_id}")
        self._update_usage()
        if self._index is not None:
            self.agent.env.repo = self._index
        self._booted.set()
        if self.options.pick_session and transcript is None:
            self.action_sessions()

    @work(exclusive=True, group="index")
    async def index_repo(self) -> None:
        status = self.query_one(StatusBar)
        last = [0.0]

        def progress(done: int, total: int, what: str) -> None:
            now = time.monotonic()
            if now - last[0] > 0.2 or done == total:
                last[0] = now
                step = "embedding" if what.startswith("embedded") else "reading"
                self.call_from_thread(setattr, status, "index", f"{step} {done}/{total}")

        try:
            index, report = await self.engine.run(
                asyncio.to_thread(_build_index, self.options, progress))
        except Exception as exc:
            status.index = "failed"
            self.notify(f"indexing failed: {exc}", severity="error", timeout=20)
            return
        self._index = index
        if self.agent is not None:
            self.agent.env.repo = index
        status.index = "ready"
        self.notify(f"index ready: {report.summary()}", timeout=6)

    # -- the embedded model, loaded in the background from the first keystroke ----------
    @on(PromptArea.Changed)
    def _first_keystroke(self) -> None:
        if not self._warming:
            self._warming = True
            self.warm_model()

    @work(thread=True, exclusive=True, group="warm")
    def warm_model(self) -> None:
        """Load the embedded model (if that is the one answering) while the user types."""
        status = self.query_one(StatusBar)
        model = self.agent.llm.model if self.agent is not None else self.options.model
        name = _local_model_name(model)
        if name is None:
            return
        from memory.local import warm

        self.call_from_thread(setattr, status, "model_loading", True)
        try:
            warm(name)
        except Exception as exc:  # the first answer reports it properly
            self.call_from_thread(self.notify, f"loading local/{name} failed: {exc}",
                                  severity="warning")
        finally:
            self.call_from_thread(setattr, status, "model_loading", False)

    # -- queries ------------------------------------------------------------------
    def prefill(self, text: str) -> None:
        prompt = self.query_one(PromptArea)
        prompt.load_text(text)
        prompt.move_cursor(prompt.document.end)
        prompt.focus()

    @on(PromptArea.Submitted)
    async def _submitted(self, event: PromptArea.Submitted) -> None:
        if event.text.startswith("/"):
            await self.run_slash(event.text)
        elif not self._booted.is_set() or self.agent is None:
            self.notify("engram is still starting; try again in a moment", severity="warning")
        elif self._busy:
            self.notify("still answering the previous query", severity="warning")
        elif self.ab_pending:
            self.run_ab(event.text, *self.ab_pending)
            self.ab_pending = None
        else:
            self.ask(event.text)

    def _meta(self, turn: Any) -> str:
        meta = (f"{turn.backend} · {turn.model} · {turn.usage.tokens} tok · "
                f"context {sum(c['tokens'] for c in turn.context)} tok")
        for noted in turn.meta.values():
            if isinstance(noted, dict) and noted.get("regenerated"):
                meta += f" · regenerated after {len(noted.get('conflicts', []))} conflict(s)"
        return meta

    def _update_usage(self, turn: Any = None) -> None:
        status = self.query_one(StatusBar)
        if turn is not None:
            status.last_tokens = turn.usage.tokens
        status.session_tokens = self.agent.llm.ledger.tokens
        status.cost = self.agent.llm.ledger.cost

    @work(group="answer")
    async def ask(self, query: str) -> None:
        self._busy = True
        try:
            chat = self.query_one("#chat", VerticalScroll)
            view = _turn_view()(query, label=f"#{len(self.agent.turns)}")
            await chat.mount(view)
            chat.scroll_end(animate=False)
            if self.agent.env.repo is None:
                self.notify("the index is not ready yet: answering without repository code",
                            severity="warning")
            turn = await self.engine.run(self.agent.ask(query, on_token=view.push))
            view.turn, view.pack = turn, self.agent.last_pack
            await view.finish(turn.assistant, self._meta(turn), turn.error)
            chat.scroll_end(animate=False)
            if turn.error:
                self.notify(turn.error, title="answer failed", severity="error", timeout=15)
            self._update_usage(turn)
            self.show_inspector(view)
        finally:
            self._busy = False

    @work(group="answer")
    async def run_ab(self, query: str, name_a: str, name_b: str) -> None:
        self._busy = True
        try:
            from tui.widgets._ab import ABView

            chat = self.query_one("#chat", VerticalScroll)
            view = ABView(query, name_a, name_b)
            await chat.mount(view)
            chat.scroll_end(animate=False)
            status = self.query_one(StatusBar)
            status.note = "preparing A/B…"
            backends = [await self.engine.run(self.agent.prepare(n)) for n in (name_a, name_b)]
            status.note = ""
            panes = [view.pane("A"), view.pane("B")]
            turns = await self.engine.run(
                self.agent.ab(query, backends, [p.push for p in panes]))
            for pane, turn in zip(panes, turns, strict=True):
                await pane.finish(turn.assistant + (f"\n\n**error:** {turn.error}"
                                                    if turn.error else ""), self._meta(turn))
            self._ab_state = (turns, backends)
            self.ab_view = view
            view.await_choice()  # focus moves to the panes: 1 / 2 choose
            self.notify("press 1 or 2 (or click) to choose the better answer")
        finally:
            self._busy = False

    def on_abview_chosen(self, event: ABView.Chosen) -> None:
        self.commit_choice(event.side)

    @work(group="answer")
    async def commit_choice(self, side: str) -> None:
        if self._ab_state is None:
            return
        turns, backends = self._ab_state
        self._ab_state, self.ab_view = None, None
        choice = 0 if side == "A" else 1
        chosen = await self.engine.run(self.agent.choose(turns, choice, backends))
        self._update_usage(chosen)
        self.query_one(PromptArea).focus()
        self.notify(f"kept {side} ({chosen.backend}); both backends observed it")

    # -- slash commands -----------------------------------------------------------
    async def run_slash(self, text: str) -> None:
        try:
            parsed = parse(text)
        except SlashError as exc:
            self.notify(str(exc), severity="error")
            return
        if parsed is None:
            return
        name, args = parsed
        handler = getattr(self, f"slash_{name}")
        try:
            await handler(args)
        except SlashError as exc:
            self.notify(str(exc), severity="error")

    def _need_agent(self) -> None:
        if self.agent is None:
            raise SlashError("engram is still starting")

    async def slash_backend(self, args: list[str]) -> None:
        from memory.backends import BackendLoadError, UnknownBackend

        self._need_agent()
        if len(args) != 1:
            raise SlashError("usage: /backend NAME (" + ", ".join(self.backend_names()) + ")")
        status = self.query_one(StatusBar)

        def progress(done: int, total: int) -> None:
            self.call_from_thread(setattr, status, "note", f"catching up {done}/{total}")

        status.note = "switching…"
        try:
            backend = await self.engine.run(self.agent.switch(args[0], progress))
        except (UnknownBackend, BackendLoadError) as exc:
            status.note = ""
            raise SlashError(str(exc)) from exc
        status.note = ""
        status.backend = backend.name
        self.notify(f"backend {backend.name}, caught up on {len(self.agent.turns)} turns")

    async def slash_ab(self, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 2:
            raise SlashError("usage: /ab A B  (two backend names)")
        unknown = [a for a in args if a not in self.backend_names()]
        if unknown:
            raise SlashError(f"unknown backend {unknown[0]!r}; known: "
                             + ", ".join(self.backend_names()))
        self.ab_pending = (args[0], args[1])
        self.notify(f"the next query is answered by {args[0]} and {args[1]}")

    async def slash_model(self, args: list[str]) -> None:
        from tui.session import usable_llm

        self._need_agent()
        if len(args) != 1:
            raise SlashError("usage: /model NAME  (any litellm model string)")
        try:
            llm = await self.engine.run(asyncio.to_thread(usable_llm, self.agent.llm, args[0]))
        except ValueError as exc:
            raise SlashError(str(exc)) from exc
        self.agent.llm = self.agent.env.llm = llm
        self.query_one(StatusBar).model = llm.model
        self.notify(f"model {llm.model}")

    async def slash_theme(self, args: list[str]) -> None:
        if len(args) != 1 or args[0] not in self.available_themes:
            raise SlashError("usage: /theme NAME (" + ", ".join(self.theme_names()) + ")")
        self.theme = args[0]
        save_config(theme=args[0])

    async def slash_inspector(self, args: list[str]) -> None:
        self.action_toggle_inspector()

    async def slash_sessions(self, args: list[str]) -> None:
        self.action_sessions()

    async def slash_export(self, args: list[str]) -> None:
        from tui.session import export_markdown

        self._need_agent()
        default = (self.home or Path(".")) / "sessions" / f"{self.session_id}.md"
        path = Path(args[0]).expanduser() if args else default
        try:
            export_markdown(self.agent.turns, path)
        except OSError as exc:
            raise SlashError(f"cannot write {path}: {exc}") from exc
        self.notify(f"conversation written to {path}")

    async def slash_help(self, args: list[str]) -> None:
        self.action_help()

    async def slash_quit(self, args: list[str]) -> None:
        self.exit()

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

    def on_turn_view_selected(self, event: TurnView.Selected) -> None:
        for view in self.query(_turn_view()):
            view.set_class(view is event.turn_view, "-selected")
        inspector = self.query_one(Inspector)
        inspector.display = True
        self.show_inspector(event.turn_view)

    def show_inspector(self, view: TurnView) -> None:
        inspector = self.query_one(Inspector)
        if not inspector.display or view.turn is None:
            return
        turn = view.turn
        if view.pack is not None:
            sections = [{**s.summary(), "text": s.text} for s in view.pack.sections]
        else:
            sections = list(turn.context)
        inspector.show(f"turn #{turn.index} · {turn.backend} · {turn.latency_ms} ms",
                       sections, self._memory_rows())

    def _memory_rows(self) -> list[MemoryRow] | None:
        backend = self.agent.backend if self.agent else None
        view = getattr(backend, "memory_view", None)
        if view is not None:
            return [MemoryRow(text, event) for text, event in view()]
        store = getattr(backend, "memories", None)
        if store is None:
            return None
        last = getattr(backend, "last", None)
        events = {e["id"]: e["op"] for e in getattr(last, "events", [])}
        rows = [MemoryRow(m.text, events.get(m.id, "")) for m in store.live()]
        rows += [MemoryRow(e["text"], "DELETE") for e in getattr(last, "events", [])
                 if e["op"] == "DELETE"]
        return rows

    async def action_quit(self) -> None:
        self.exit()

    def on_unmount(self) -> None:
        if self.agent is not None and self.agent.transcript is not None:
            self.agent.transcript.close()
        self.engine.stop()
