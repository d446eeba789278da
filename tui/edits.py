"""The assistant acting on the repository, as the app shows it: the edit an answer
proposes (a diff to apply with y or reject with n, or applied at once with
``auto_apply``), ``/undo``, the developer's consent before a command runs, and a line per
tool call in the turn.

The engine is ``memory.acting.workbench.Workbench`` (one per session, made on the engine loop
once the session is open). Its steps touch git and the work tree: they run on the
engine loop's threads, never the UI's. The consent asker is called by the tool loop on
the engine loop; it shows a modal on the UI's loop and waits for it there, so neither
loop blocks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text

from tui.calls import call_line, tool_lines
from tui.config import load_config
from tui.diffview import diff_stats, diff_text, theme_colours
from tui.host import Host
from tui.widgets._status import StatusBar


async def _workbench(agent: Any, repo: Path, asker: Any, commands: bool) -> Any:
    """Runs on the engine loop: the repository's root, the consent policy and the
    Workbench (its modules imported there, not on the UI's loop); commands run in the
    Workbench's default jail (memory/acting/jail/tree.py)."""
    from memory.acting.tools.consent import ConsentPolicy
    from memory.acting.workbench import Workbench
    from tui.session import repo_root

    root = await asyncio.to_thread(repo_root, repo)
    return Workbench(agent, root, ConsentPolicy(asker=asker), commands=commands)


async def _edit_records(agent: Any) -> list[dict[str, Any]]:
    """The session's ``edit`` records so far (a resumed session's), read in a thread."""
    from memory.transcript import read_transcript

    path = getattr(agent.transcript, "path", None)
    if path is None:
        return []
    return await asyncio.to_thread(lambda: read_transcript(path).of_type("edit"))


def _head(root: Path) -> str:
    from memory import _git

    return _git.head(root)


async def _call(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a thread of the engine loop (git and file work)."""
    return await asyncio.to_thread(function, *args)


def _short(commit: str) -> str:
    return commit[:8]


class EditFlow:
    """One per app. ``attach`` makes the session's Workbench; ``after_turn`` shows what a
    turn did (tool calls, the edit) and asks about its edit; ``undo`` reverts the last
    applied answer. ``problem`` says why nothing acts (not started, not a repository)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.bench: Any = None  # memory.acting.workbench.Workbench once attached
        self.problem = "engram is still starting"
        self.auto_apply = self._setting("auto_apply", False)
        self.commands = self._setting("commands", True)
        self.applied: list[tuple[str, Any]] = []  # (commit, the turn's view), oldest first
        self._ui_loop: asyncio.AbstractEventLoop | None = None
        self.watching: Any = None  # the turn's view while it is answered (live call lines)
        self._live: list[str] = []
        self.notice = ""  # what the model is not offered (said once per model)

    def _setting(self, key: str, default: bool) -> bool:
        chosen = getattr(self.host.options, key, None)
        if chosen is None:
            chosen = load_config().get(key, default)
        return bool(chosen)

    # -- the session's workbench ---------------------------------------------------------
    async def attach(self, agent: Any, views: list[Any] | None = None) -> None:
        """Make the session's Workbench (on the engine loop); on failure the app still
        answers, and every edit or /undo says why it cannot act. ``views``: the turns of
        a resumed session, which show what became of their edits."""
        self.bench, self.applied = None, []
        if views:
            await self._show_recorded(views, await self.host.engine.run(_edit_records(agent)))
        if not getattr(self.host.options, "act", True):
            self.problem = "acting on the repository is off in this app"
            return
        self._ui_loop = asyncio.get_running_loop()
        try:
            self.bench = await self.host.engine.run(
                _workbench(agent, self.host.options.repo, self.ask, self.commands))
        except Exception as exc:  # the chat goes on without tools and edits
            self.problem = f"engram cannot act on this repository: {exc}"
            self.host.notify(self.problem, title="edits and tools are off",
                             severity="warning", timeout=20)
            return
        self.problem = ""
        self.offer()

    def offer(self) -> None:
        """Offer the session's model the tools and the edit format it can follow (its
        profile, memory/llm/capabilities.py), at start and after /model; what it is not
        offered is said once, in a notice and the status line, never in the answers."""
        if self.bench is None:
            return
        offered = self.bench.offer()
        agent = self.bench.agent
        agent.watch_calls = self._called  # the calls shown as they finish
        notice = offered.notice(agent.llm.model)
        self.host.query_one(StatusBar).acting = "" if not notice else "answers from the code"
        if notice and notice != self.notice:
            self.host.notify(notice, title="no tools or edits for this model", timeout=20)
        self.notice = notice

    def watch(self, view: Any) -> None:
        """Show the calls of the turn ``view`` is answering as they finish (None: stop)."""
        self.watching, self._live = view, []

    def _called(self, call: dict[str, Any]) -> None:
        """A call finished (on the engine loop): its line goes to the watched turn."""
        view, loop = self.watching, self._ui_loop
        if view is None or loop is None:
            return
        line = call_line(call)

        def show() -> None:
            if view is self.watching and view.is_attached:
                self._live.append(line)
                view.show_tools(self._live)

        loop.call_soon_threadsafe(show)

    async def choose(self, screen: Any) -> Any:
        """Show a modal ``screen`` and wait for its result, on the UI loop (no worker
        needed); a cancelled wait takes the screen down."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def dismissed(result: Any) -> None:
            if not answer.done():
                answer.set_result(result)

        self.host.push_screen(screen, dismissed)
        try:
            return await answer
        except asyncio.CancelledError:
            if screen.is_attached and screen.is_current:
                screen.dismiss(None)
            raise

    async def _show_recorded(self, views: list[Any], records: list[dict[str, Any]]) -> None:
        """A resumed session's turns say what became of their edits, as recorded."""
        by_turn = {v.turn.index: v for v in views if getattr(v, "turn", None) is not None}
        applied: dict[str, Any] = {}
        for record in records:
            op, commit = record.get("op"), str(record.get("commit") or "")
            paths = ", ".join(record.get("paths") or [])
            view = by_turn.get(record.get("turn"))  # type: ignore[arg-type]
            if op == "undone" and commit in applied:
                view = applied.pop(commit)
                view.show_edit(f"↶ undone: {record.get('message', '')}", "undone")
                self.applied = [(c, v) for c, v in self.applied if c != commit]
            elif view is None:
                continue
            elif op == "proposed" and record.get("ok"):
                await self._fold_diff(view, str(record.get("diff") or ""))
            elif op == "applied":
                view.show_edit(f"✓ applied as {_short(commit)}: {paths}", "applied")
                applied[commit] = view
                self.applied.append((commit, view))
            elif op == "rejected":
                view.show_edit(f"✗ rejected: {paths} · nothing was written", "rejected")
            elif op == "refused" or (op == "proposed" and not record.get("ok")):
                view.show_edit(f"✗ the edit was not applied: {record.get('message', '')}",
                               "refused")

    # -- consent: the tool loop (engine loop) asks, the UI loop shows the modal ------------
    async def ask(self, command: str) -> Any:
        """The ConsentPolicy's asker, called on the engine loop: waits for the modal on the
        UI loop without blocking either; a cancelled turn takes its modal down."""
        if self._ui_loop is None:
            raise RuntimeError("the app is not running")
        from memory.acting.tools.consent import ASKING

        asking = ASKING.get()  # the answer under way on this loop: who asks
        future = asyncio.run_coroutine_threadsafe(
            self._ask_ui(command, str(asking) if asking is not None else ""), self._ui_loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    async def _ask_ui(self, command: str, asking: str) -> Any:
        from tui.screens import ConsentScreen

        return await self.choose(ConsentScreen(command, asking))

    # -- after an answer -------------------------------------------------------------------
    async def after_turn(self, view: Any, turn: Any) -> None:
        """The turn's tool calls, then its edit: shown as a diff to apply or reject (or
        applied at once with auto_apply); malformed blocks and refusals said in the turn."""
        self.watch(None)
        view.show_tools(tool_lines(turn.meta))
        self._reveal(view)
        if self.bench is None or turn.error:
            return
        try:
            prepared = await self.host.engine.run(_call(self.bench.propose, turn))
        except Exception as exc:
            self._say(view, f"✗ the edit could not be checked: {exc}", "refused")
            return
        if prepared is None:
            return
        if not prepared.ok:
            self._say(view, self._refused("the edit was not applied", prepared.message,
                                         prepared.problems), "refused")
            self.host.notify("the answer's edit does not apply: nothing was written",
                             severity="warning")
            return
        added, removed = diff_stats(prepared.diff)
        summary = f"{', '.join(prepared.paths)} (+{added} -{removed})"
        await self._fold_diff(view, prepared.diff)
        if self.auto_apply:
            await self._apply(view, prepared, turn, summary, "auto_apply is on")
            return
        self._say(view, f"✎ edit proposed: {summary} · y applies, n rejects", "proposed")
        from tui.screens import DiffScreen

        title = f"turn #{turn.index}: apply this edit?"
        if await self.choose(DiffScreen(prepared.diff, prepared.paths, title)):
            await self._apply(view, prepared, turn, summary, "")
        else:
            await self.host.engine.run(_call(self.bench.reject, prepared, turn))
            self._say(view, f"✗ rejected: {summary} · nothing was written", "rejected")

    def _say(self, view: Any, text: Any, outcome: str) -> None:
        view.show_edit(text, outcome)
        self._reveal(view)

    def _reveal(self, view: Any) -> None:
        """Keep the end of the chat in view once the turn's new lines are laid out."""
        chat = view.parent
        if chat is not None and hasattr(chat, "scroll_end"):
            self.host.call_after_refresh(chat.scroll_end, animate=False)

    async def _apply(self, view: Any, prepared: Any, turn: Any, summary: str,
                     why: str) -> None:
        applied = await self.host.engine.run(_call(self.bench.apply, prepared, turn))
        if not applied.ok:
            self._say(view, self._refused("not applied", applied.message, []), "refused")
            self.host.notify(applied.message, title="the edit was not applied",
                             severity="error", timeout=15)
            return
        paths = ", ".join(applied.paths) or summary
        how = f" ({why})" if why else ""
        self._say(view, f"✓ applied{how} as {_short(applied.commit)}: {paths} · /undo reverts "
                       "it", "applied")
        self.applied.append((applied.commit, view))
        await self._show_head()
        self._index_behind(applied.index_error)
        self.host.notify(f"committed {_short(applied.commit)}: {paths}")

    async def _fold_diff(self, view: Any, diff: str) -> None:
        """The diff, folded in the turn: there to read again whatever became of it."""
        if diff.strip():
            await view.show_diff(diff_text(diff, theme_colours(view.app.current_theme)))

    def _index_behind(self, error: str) -> None:
        """Say that the index could not catch up with the tree engram just changed (the
        workbench refreshes it after an edit or an undo; the commit stands)."""
        if error:
            self.host.notify(f"the index could not be refreshed: {error}", severity="warning")

    async def _show_head(self) -> None:
        """The status bar's HEAD after engram committed or undid."""
        try:
            head = await self.host.engine.run(_call(_head, self.bench.root))
        except Exception:  # the status bar is not worth an error
            return
        self.host.query_one(StatusBar).head = head[:8]

    @staticmethod
    def _refused(head: str, message: str, problems: list[Any]) -> Text:
        text = Text(f"✗ {head}: {message.strip()}")
        listed = message.count("\n- ")
        for problem in problems[listed:]:
            text.append(f"\n- {problem}")
        return text

    # -- /undo -----------------------------------------------------------------------------
    async def undo(self) -> None:
        """Revert the last applied answer (the engine refuses when it is not safe)."""
        if self.bench is None:
            self.host.notify(f"nothing to undo: {self.problem}", severity="warning")
            return
        with self.host.operations.shown("undoing the last applied edit", cancellable=False):
            undone = await self.host.engine.run(_call(self.bench.undo))
        if not undone.ok:
            self.host.notify(undone.message, title="not undone", severity="warning",
                             timeout=15)
            return
        await self._show_head()
        self._index_behind(undone.index_error)
        for commit, view in list(self.applied):
            if commit == undone.commit:
                if view.is_attached:
                    self._say(view, f"↶ undone: {undone.message}", "undone")
                self.applied.remove((commit, view))
        self.host.notify(undone.message, title="undone")
