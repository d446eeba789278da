"""The app's slash commands. Quick ones run in the input handler; slow ones (a backend
switch with its catch-up, a model check) start a worker that shows its progress in the
task bar and stops on Esc, so the input stays live."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any

from themes import THEMES
from tui.config import save_config
from tui.edits import EditFlow
from tui.host import SessionHost
from tui.slash import SlashError, parse
from tui.widgets._status import StatusBar


def backend_names() -> list[str]:
    from memory.backends import registry

    return registry.names()


def theme_names() -> list[str]:
    return [t.name for t in THEMES]


class SlashHandlers:
    """``slash_<name>(args)`` for every command in tui/slash.py, run on the host; slow ones
    in the host's workers. ``refresh_steering`` and ``report_memory`` keep the inspector's
    list and the status bar's memory health current after a command changed them."""

    def __init__(self, host: SessionHost, *, refresh_steering: Callable[[], None],
                 report_memory: Callable[[], None], edits: EditFlow) -> None:
        self.host = host
        self.edits = edits
        self.refresh_steering = refresh_steering
        self.report_memory_issues = report_memory
        self.ab_pending: tuple[str, str] | None = None  # /ab A B: the next query's pair
        self.quitting = False  # Ctrl+Q while the session's summary is kept: quit at once
        self.remembered_turns = 0  # turns the last kept session summary covered

    def _worker(self, work: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """Run ``work(*args)`` as the host's one slow command (exclusive group "switch")."""
        self.host.run_worker(partial(work, *args), name=work.__name__.lstrip("_"),
                             group="switch", exclusive=True, exit_on_error=False)

    async def run(self, text: str) -> None:
        try:
            parsed = parse(text)
        except SlashError as exc:
            self.host.notify(str(exc), severity="error")
            return
        if parsed is None:
            return
        name, args = parsed
        handler = getattr(self, f"slash_{name}")
        try:
            await handler(args)
        except SlashError as exc:
            self.host.notify(str(exc), severity="error")

    def _need_agent(self) -> None:
        if self.host.agent is None:
            raise SlashError("engram is still starting")

    def _need_idle(self) -> None:
        if self.host.operations.what:
            raise SlashError(f"{self.host.operations.what}; wait for it or press Esc to cancel it")

    # -- slow commands: workers --------------------------------------------------------
    async def slash_backend(self, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 1:
            raise SlashError("usage: /backend NAME (" + ", ".join(backend_names()) + ")")
        if args[0] not in backend_names():
            raise SlashError(f"unknown backend {args[0]!r}; known: "
                             + ", ".join(backend_names()))
        self._need_idle()
        if args[0] == self.host.agent.backend.name:
            self.host.notify(f"backend {args[0]} is already active")
            return
        self._worker(self._switch_backend, args[0])

    async def _switch_backend(self, name: str) -> None:
        """Catch the new backend up on the conversation; the old one stays active until it is
        done, and stays active if Esc cancels."""
        from memory.backends import BackendLoadError, UnknownBackend

        previous = self.host.agent.backend.name
        turns = sum(1 for t in self.host.agent.turns if t.ok)
        with self.host.operations.shown(f"switching to {name}: catching up on {turns} turns"):
            try:
                backend = await self.host.engine.run(
                    self.host.agent.switch(name, self.host.operations.progress()))
            except asyncio.CancelledError:
                self.host.notify(f"switch to {name} cancelled; {previous} is still active",
                            severity="warning")
                raise
            except (UnknownBackend, BackendLoadError) as exc:
                self.host.notify(str(exc), severity="error")
                return
        self.host.query_one(StatusBar).backend = backend.name
        self.host.notify(f"backend {backend.name}, caught up on {turns} turns")
        self.report_memory_issues()
        self.refresh_steering()

    async def slash_model(self, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 1:
            raise SlashError("usage: /model NAME  (any litellm model string)")
        self._need_idle()
        self._worker(self._change_model, args[0])

    async def _change_model(self, model: str) -> None:
        from tui.session import usable_llm

        with self.host.operations.shown(f"checking model {model}"):
            try:
                llm = await self.host.engine.run(
                    asyncio.to_thread(usable_llm, self.host.agent.llm, model))
            except ValueError as exc:
                self.host.notify(str(exc), severity="error")
                return
        self.host.agent.llm = self.host.agent.env.llm = llm
        self.host.query_one(StatusBar).model = llm.model
        self.host.notify(f"model {llm.model}")
        self.edits.offer()  # the tools and the edit format this model can follow

    async def slash_compact(self, args: list[str]) -> None:
        self._need_agent()
        backend = self.host.agent.backend
        if not callable(getattr(backend, "compact", None)):
            raise SlashError(f"the {backend.name} backend cannot compact; /compact works with "
                             "the compact backend (/backend compact)")
        self._need_idle()
        self._worker(self._force_compaction, args[0] if args else "")

    async def _force_compaction(self, guidance: str) -> None:
        """Fold every turn but the newest into the compact backend's summary now."""
        agent = self.host.agent
        backend = agent.backend
        with self.host.operations.shown("compacting the conversation"):
            try:
                changed = await self.host.engine.run(backend.compact(guidance))
            except asyncio.CancelledError:
                self.host.notify("compaction cancelled; the turns are kept", severity="warning")
                raise
        skipped = []
        for record in backend.drain_records():
            agent.record(record)
            if record.get("op") in ("skipped", "error"):
                skipped.append(record)
                agent.memory_issues.append({**record, "turn": len(agent.turns) - 1})
        if changed:
            self.host.notify(f"compacted: the summary now stands for turns "
                        f"{backend.summarized[0]}-{backend.summarized[-1]} (F2 shows it)")
        elif skipped:
            self.host.notify(str(skipped[0].get("text", "")), title="compaction skipped",
                        severity="warning")
        else:
            self.host.notify("nothing to compact: only the first and the latest turn are left")
        self.report_memory_issues()

    async def slash_remember(self, args: list[str]) -> None:
        self._need_agent()
        if not callable(getattr(self.host.agent.backend, "remember", None)):
            raise SlashError(f"the {self.host.agent.backend.name} backend keeps no session "
                             "summaries; /remember works with the cards backend")
        self._need_idle()
        self._worker(self._remember_session)

    async def _remember_session(self) -> None:
        """Summarise this session for the repository's later sessions (cards)."""
        backend = self.host.agent.backend
        with self.host.operations.shown("summarising this session"):
            try:
                exp = await self.host.engine.run(backend.remember())
            except asyncio.CancelledError:
                self.host.notify("session summary cancelled", severity="warning")
                raise
        for record in backend.drain_records():
            self.host.agent.record(record)
        self.remembered_turns = len(self.host.agent.turns)
        if exp is None:
            self.host.notify("nothing to remember yet: no fact or code in this session")
        else:
            self.host.notify(f"kept for later sessions: {exp.text()[:160]}",
                        title=f"session {exp.session} remembered")

    async def slash_experience(self, args: list[str]) -> None:
        self._need_agent()
        pin = getattr(self.host.agent.backend, "pin_experience", None)
        if not callable(pin):
            raise SlashError(f"the {self.host.agent.backend.name} backend has no session "
                             "summaries; /experience works with the cards backend")
        if len(args) > 1:
            raise SlashError("usage: /experience [SESSION]")
        try:
            exp = pin(args[0] if args else "")
        except LookupError as exc:
            raise SlashError(str(exc)) from exc
        self.host.notify(f"every answer now sees session {exp.session}'s summary (F2 shows it)")

    async def slash_undo(self, args: list[str]) -> None:
        if args:
            raise SlashError("usage: /undo  (reverts the last applied edit)")
        self._need_idle()
        self._worker(self.edits.undo)

    # -- quick commands ----------------------------------------------------------------
    async def slash_autoapply(self, args: list[str]) -> None:
        if len(args) > 1 or (args and args[0].lower() not in ("on", "off")):
            raise SlashError("usage: /autoapply [on|off]")
        if args:
            self.edits.auto_apply = args[0].lower() == "on"
            save_config(auto_apply=self.edits.auto_apply)
        if self.edits.auto_apply:
            self.host.notify("auto_apply is on: an answer's edit is applied and committed "
                             "without asking (/undo reverts it)")
        else:
            self.host.notify("auto_apply is off: each edit is shown as a diff first "
                             "(y applies, n rejects)")

    async def slash_ab(self, args: list[str]) -> None:
        self._need_agent()
        if len(args) != 2:
            raise SlashError("usage: /ab A B  (two backend names)")
        unknown = [a for a in args if a not in backend_names()]
        if unknown:
            raise SlashError(f"unknown backend {unknown[0]!r}; known: "
                             + ", ".join(backend_names()))
        if args[0] == args[1]:
            raise SlashError("/ab compares two different backends")
        self.ab_pending = (args[0], args[1])
        self.host.notify(f"the next query is answered by {args[0]} and {args[1]}")

    async def slash_theme(self, args: list[str]) -> None:
        if len(args) != 1 or args[0] not in self.host.available_themes:
            raise SlashError("usage: /theme NAME (" + ", ".join(theme_names()) + ")")
        self.host.theme = args[0]
        save_config(theme=args[0])

    async def slash_inspector(self, args: list[str]) -> None:
        await self.host.run_action("toggle_inspector")

    async def slash_sessions(self, args: list[str]) -> None:
        self._need_idle()
        await self.host.run_action("sessions")

    async def slash_export(self, args: list[str]) -> None:
        from tui.session import export_markdown, export_path

        self._need_agent()
        try:
            path = Path(args[0]).expanduser() if args else export_path(self.host.home,
                                                                       self.host.session_id)
        except ValueError as exc:
            raise SlashError(str(exc)) from exc
        try:
            export_markdown(self.host.agent.turns, path)
        except OSError as exc:
            raise SlashError(f"cannot write {path}: {exc}") from exc
        self.host.notify(f"conversation written to {path}")

    async def slash_help(self, args: list[str]) -> None:
        await self.host.run_action("help")

    async def slash_quit(self, args: list[str]) -> None:
        self.quit_keeping_summary()

    def quit_keeping_summary(self) -> None:
        """Quit. A backend that keeps session summaries for later sessions (cards) first
        keeps this one's when turns were answered since the last; Esc or a second Ctrl+Q
        quits without it. Busy with something else: quit at once."""
        agent = self.host.agent
        keeps = agent is not None and callable(getattr(agent.backend, "remember", None))
        new = agent is not None and any(t.ok for t in agent.turns[self.remembered_turns:])
        if self.quitting or not keeps or not new or self.host.operations.what:
            self.host.exit()
            return
        self.quitting = True
        self._worker(self._remember_then_exit)

    async def _remember_then_exit(self) -> None:
        try:
            with self.host.operations.shown("keeping this session's summary for later "
                                            "sessions (Esc or Ctrl+Q: quit without it)"):
                await self.host.engine.run(self.host.agent.end_session())
        finally:
            self.host.exit()
