"""The app's slash commands. Quick ones run in the input handler; slow ones (a backend
switch with its catch-up, a model check) start a worker that shows its progress in the
task bar and stops on Esc, so the input stays live."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work

from tui.config import save_config
from tui.slash import SlashError, parse
from tui.widgets._status import StatusBar
from tui.widgets._task import TaskBar

if TYPE_CHECKING:
    from tui.app import EngramApp


class SlashHandlers:
    """Mixed into ``EngramApp``: ``slash_<name>(args)`` for every command in tui/slash.py."""

    async def run_slash(self: EngramApp, text: str) -> None:
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

    def _need_agent(self: EngramApp) -> None:
        if self.agent is None:
            raise SlashError("engram is still starting")

    def _need_idle(self: EngramApp) -> None:
        if self.operation:
            raise SlashError(f"{self.operation}; wait for it or press Esc to cancel it")

    # -- slow commands: workers --------------------------------------------------------
    async def slash_backend(self: EngramApp, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 1:
            raise SlashError("usage: /backend NAME (" + ", ".join(self.backend_names()) + ")")
        if args[0] not in self.backend_names():
            raise SlashError(f"unknown backend {args[0]!r}; known: "
                             + ", ".join(self.backend_names()))
        self._need_idle()
        if args[0] == self.backend_name:
            self.notify(f"backend {args[0]} is already active")
            return
        self.switch_backend(args[0])

    @work(exclusive=True, group="switch", exit_on_error=False)
    async def switch_backend(self: EngramApp, name: str) -> None:
        """Catch the new backend up on the conversation; the old one stays active until it is
        done, and stays active if Esc cancels."""
        from memory.backends import BackendLoadError, UnknownBackend

        previous = self.backend_name
        turns = sum(1 for t in self.agent.turns if t.ok)
        with self.operation_shown(f"switching to {name}: catching up on {turns} turns"):
            try:
                backend = await self.engine.run(
                    self.agent.switch(name, self.progress_callback()))
            except asyncio.CancelledError:
                self.notify(f"switch to {name} cancelled; {previous} is still active",
                            severity="warning")
                raise
            except (UnknownBackend, BackendLoadError) as exc:
                self.notify(str(exc), severity="error")
                return
        self.query_one(StatusBar).backend = backend.name
        self.notify(f"backend {backend.name}, caught up on {turns} turns")
        self.report_memory_issues()
        self.refresh_steering()

    async def slash_model(self: EngramApp, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 1:
            raise SlashError("usage: /model NAME  (any litellm model string)")
        self._need_idle()
        self.change_model(args[0])

    @work(exclusive=True, group="switch", exit_on_error=False)
    async def change_model(self: EngramApp, model: str) -> None:
        from tui.session import usable_llm

        with self.operation_shown(f"checking model {model}"):
            try:
                llm = await self.engine.run(asyncio.to_thread(usable_llm, self.agent.llm, model))
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
        self.agent.llm = self.agent.env.llm = llm
        self.query_one(StatusBar).model = llm.model
        self.notify(f"model {llm.model}")

    async def slash_compact(self: EngramApp, args: list[str]) -> None:
        self._need_agent()
        backend = self.agent.backend
        if not callable(getattr(backend, "compact", None)):
            raise SlashError(f"the {backend.name} backend cannot compact; /compact works with "
                             "the compact backend (/backend compact)")
        self._need_idle()
        self.force_compaction(args[0] if args else "")

    @work(exclusive=True, group="switch", exit_on_error=False)
    async def force_compaction(self: EngramApp, guidance: str) -> None:
        """Fold every turn but the newest into the compact backend's summary now."""
        backend = self.agent.backend
        with self.operation_shown("compacting the conversation"):
            try:
                changed = await self.engine.run(backend.compact(guidance))
            except asyncio.CancelledError:
                self.notify("compaction cancelled; the turns are kept", severity="warning")
                raise
        skipped = []
        for record in backend.drain_records():
            self.agent.record(record)
            if record.get("op") in ("skipped", "error"):
                skipped.append(record)
                self.agent.memory_issues.append({**record, "turn": len(self.agent.turns) - 1})
        if changed:
            self.notify(f"compacted: the summary now stands for turns "
                        f"{backend.summarized[0]}-{backend.summarized[-1]} (F2 shows it)")
        elif skipped:
            self.notify(str(skipped[0].get("text", "")), title="compaction skipped",
                        severity="warning")
        else:
            self.notify("nothing to compact: only the first and the latest turn are left")
        self.report_memory_issues()

    async def slash_remember(self: EngramApp, args: list[str]) -> None:
        self._need_agent()
        if not callable(getattr(self.agent.backend, "remember", None)):
            raise SlashError(f"the {self.agent.backend.name} backend keeps no session "
                             "summaries; /remember works with the cards backend")
        self._need_idle()
        self.remember_session()

    @work(exclusive=True, group="switch", exit_on_error=False)
    async def remember_session(self: EngramApp) -> None:
        """Summarise this session for the repository's later sessions (cards)."""
        backend = self.agent.backend
        with self.operation_shown("summarising this session"):
            try:
                exp = await self.engine.run(backend.remember())
            except asyncio.CancelledError:
                self.notify("session summary cancelled", severity="warning")
                raise
        for record in backend.drain_records():
            self.agent.record(record)
        self.remembered_turns = len(self.agent.turns)
        if exp is None:
            self.notify("nothing to remember yet: no fact or code in this session")
        else:
            self.notify(f"kept for later sessions: {exp.text()[:160]}",
                        title=f"session {exp.session} remembered")

    async def slash_experience(self: EngramApp, args: list[str]) -> None:
        self._need_agent()
        pin = getattr(self.agent.backend, "pin_experience", None)
        if not callable(pin):
            raise SlashError(f"the {self.agent.backend.name} backend has no session "
                             "summaries; /experience works with the cards backend")
        if len(args) > 1:
            raise SlashError("usage: /experience [SESSION]")
        try:
            exp = pin(args[0] if args else "")
        except LookupError as exc:
            raise SlashError(str(exc)) from exc
        self.notify(f"every answer now sees session {exp.session}'s summary (F2 shows it)")

    # -- quick commands ----------------------------------------------------------------
    async def slash_ab(self: EngramApp, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 2:
            raise SlashError("usage: /ab A B  (two backend names)")
        unknown = [a for a in args if a not in self.backend_names()]
        if unknown:
            raise SlashError(f"unknown backend {unknown[0]!r}; known: "
                             + ", ".join(self.backend_names()))
        if args[0] == args[1]:
            raise SlashError("/ab compares two different backends")
        self.ab_pending = (args[0], args[1])
        self.notify(f"the next query is answered by {args[0]} and {args[1]}")

    async def slash_theme(self: EngramApp, args: list[str]) -> None:
        if len(args) != 1 or args[0] not in self.available_themes:
            raise SlashError("usage: /theme NAME (" + ", ".join(self.theme_names()) + ")")
        self.theme = args[0]
        save_config(theme=args[0])

    async def slash_inspector(self: EngramApp, args: list[str]) -> None:
        self.action_toggle_inspector()

    async def slash_sessions(self: EngramApp, args: list[str]) -> None:
        self._need_idle()
        self.action_sessions()

    async def slash_export(self: EngramApp, args: list[str]) -> None:
        from tui.session import export_markdown, export_path

        self._need_agent()
        try:
            path = Path(args[0]).expanduser() if args else export_path(self.home,
                                                                       self.session_id)
        except ValueError as exc:
            raise SlashError(str(exc)) from exc
        try:
            export_markdown(self.agent.turns, path)
        except OSError as exc:
            raise SlashError(f"cannot write {path}: {exc}") from exc
        self.notify(f"conversation written to {path}")

    async def slash_help(self: EngramApp, args: list[str]) -> None:
        self.action_help()

    async def slash_quit(self: EngramApp, args: list[str]) -> None:
        self.quit_keeping_summary()

    def quit_keeping_summary(self: EngramApp) -> None:
        """Quit. A backend that keeps session summaries for later sessions (cards) first
        keeps this one's when turns were answered since the last; Esc or a second Ctrl+Q
        quits without it. Busy with something else: quit at once."""
        agent = self.agent
        keeps = agent is not None and callable(getattr(agent.backend, "remember", None))
        new = agent is not None and any(t.ok for t in agent.turns[self.remembered_turns:])
        if self.quitting or not keeps or not new or self.operation:
            self.exit()
            return
        self.quitting = True
        self.remember_then_exit()

    @work(exclusive=True, group="switch", exit_on_error=False)
    async def remember_then_exit(self: EngramApp) -> None:
        try:
            with self.operation_shown("keeping this session's summary for later sessions "
                                      "(Esc or Ctrl+Q: quit without it)"):
                await self.engine.run(self.agent.end_session())
        finally:
            self.exit()

    # -- memory health -----------------------------------------------------------------
    def report_memory_issues(self: EngramApp) -> None:
        """Count skipped and failed memory updates in the status bar; say why the first time."""
        issues: list[dict[str, Any]] = self.agent.memory_issues
        if not issues:
            self.query_one(StatusBar).memory = ""
            return
        skipped = sum(1 for i in issues if i.get("op") == "skipped")
        failed = len(issues) - skipped
        parts = [f"{skipped} skipped"] if skipped else []
        parts += [f"{failed} failed"] if failed else []
        self.query_one(StatusBar).memory = "memory " + ", ".join(parts)
        if not self._memory_warned:
            self._memory_warned = True
            first = issues[0]
            self.notify(f"{first.get('backend', '?')}: {first.get('text', '')}\n"
                        "The inspector (F2) lists every skipped update.",
                        title="memory update skipped" if first.get("op") == "skipped"
                        else "memory update failed", severity="warning", timeout=15)

    def task_bar(self: EngramApp) -> TaskBar:
        return self.query_one(TaskBar)
