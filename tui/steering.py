"""Steering the memory from the inspector: the next context's items, pinned, forgotten
or edited (keys p, d, e on the list; F4 focuses it). Pins are quick and done in the
handler; a forget (after confirmation) or an edit (in a modal) runs on the engine in a
worker, since a backend may re-embed or write its store."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from tui.host import Host
from tui.widgets._inspector import Inspector
from tui.widgets._steer import SteerItem, SteerList


def steer_items(agent: Any) -> list[SteerItem]:
    """What the model will see next turn, as far as the app knows without asking the
    backend (which may call the LLM): the pins, the latest context's sections (less what
    was forgotten since, with edited texts), then the backend's other memories."""
    from memory.turn.steering import memories_of, unsupported

    backend = agent.backend
    memories = {m.id: m for m in memories_of(backend) or []}
    can_forget = unsupported(backend, "forget") is None
    can_edit = unsupported(backend, "edit") is None
    forgotten = {str(op.get("id")) for op in agent.user_ops if op.get("op") == "forget"}

    def item(kind: str, source: str, text: str, tokens: int, **flags: Any) -> SteerItem:
        memory = memories.get(source)
        if memory is not None:
            text = memory.text
        return SteerItem(kind, source, text, tokens,
                         forgettable=can_forget and memory is not None,
                         editable=can_edit and memory is not None and memory.editable, **flags)

    items: list[SteerItem] = []
    seen: set[str] = set()
    for pin in agent.steering.pins.values():
        text = pin.sections[0].text if pin.sections else ""
        items.append(item(pin.kind, pin.source, text, sum(s.tokens for s in pin.sections),
                          pinned=True))
        seen.add(pin.source)
    pack = agent.last_pack
    for section in pack.sections if pack is not None else []:
        if section.kind == "system" or section.source in seen or section.source in forgotten:
            continue
        seen.add(section.source)
        items.append(item(section.kind, section.source, section.text, section.tokens))
    for memory in memories.values():
        if memory.id not in seen:
            kind = "history" if memory.id.startswith("turn:") else "memory"
            items.append(item(kind, memory.id, memory.text, 0, in_context=False))
    return items


class Steering:
    """Pins, forgets and edits asked for in the inspector's next-context list, done on the
    host's agent (forgets and edits in the host's workers)."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def refresh(self) -> None:
        host = self.host
        inspector = host.query_one(Inspector)
        if host.agent is None or not inspector.display:
            return
        pack = host.agent.last_pack
        where = f"{host.agent.backend.name}, after turn #{len(host.agent.turns) - 1}" \
            if pack is not None else host.agent.backend.name
        inspector.show_steering(where, steer_items(host.agent))

    def focus(self) -> None:
        """Refresh the next-context list and focus it (the inspector is shown)."""
        self.refresh()
        listing = self.host.query_one(SteerList)
        listing.focus()
        self.host.call_after_refresh(listing.scroll_visible, animate=False)

    def _refusal(self) -> str:
        if self.host.agent is None:
            return "engram is still starting"
        if self.host.operations.what:
            return f"{self.host.operations.what}; wait for it or press Esc to cancel it"
        return ""

    def requested(self, item: SteerItem, op: str) -> None:
        """The user pressed p, d or e on ``item``."""
        from memory.turn.steering import unsupported

        host = self.host
        refusal = self._refusal()
        if refusal:
            host.notify(refusal, severity="warning")
            return
        backend = host.agent.backend
        if op == "pin":
            self.toggle_pin(item)
            return
        why = unsupported(backend, op)
        if why is None and not item.forgettable:
            why = ("repository code is not a memory: pin it (p), or change the file"
                   if item.kind == "repo" else f"{item.source} is not one of "
                   f"{backend.name}'s memories now")
        if why is None and op == "edit" and not item.editable:
            self.steer_edit(item, item.text)  # the backend says why it cannot
            return
        if why is not None:
            host.notify(why, severity="warning", timeout=10)
            return
        if op == "forget":
            self._confirm_forget(item)
        else:
            self._ask_edit(item)

    def toggle_pin(self, item: SteerItem) -> None:
        agent = self.host.agent
        if item.pinned:
            agent.unpin(item.source)
            self.host.notify(f"unpinned {item.source}")
        else:
            agent.pin(item.kind, item.source, self._sections_of(item))
            self.host.notify(f"pinned {item.source}: it is in every next context")
        self.refresh()

    def _sections_of(self, item: SteerItem) -> list[Any]:
        from memory.types import Section

        agent = self.host.agent
        pack = agent.last_pack
        found = [s for s in (pack.sections if pack is not None else [])
                 if s.source == item.source]
        if found and not (item.kind == "memory" and item.forgettable):
            return found
        text = f"- {item.text}" if item.kind == "memory" else item.text
        return [Section(item.kind, item.source, text,  # type: ignore[arg-type]
                        agent.llm.count_tokens(text))]

    def _confirm_forget(self, item: SteerItem) -> None:
        from tui.screens import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.steer_forget(item)

        preview = " ".join(item.text.split())[:200]
        self.host.push_screen(ConfirmScreen(
            f"Forget this memory of {self.host.agent.backend.name}?\n\n{preview}\n\n"
            "It is deleted from the backend and the forget is recorded in the session."),
            answered)

    def _ask_edit(self, item: SteerItem) -> None:
        from tui.screens import EditScreen

        def edited(text: str | None) -> None:
            if text is not None and text.strip() != item.text.strip():
                self.steer_edit(item, text)

        self.host.push_screen(EditScreen(f"edit {item.source} ({self.host.agent.backend.name})",
                                         item.text), edited)

    def steer_forget(self, item: SteerItem) -> None:
        self._steer(f"forgot {item.source}", lambda agent: agent.forget(item.source))

    def steer_edit(self, item: SteerItem, text: str) -> None:
        self._steer(f"edited {item.source}", lambda agent: agent.edit(item.source, text))

    def _steer(self, done: str, call: Callable[[Any], Coroutine[Any, Any, Any]]) -> None:
        self.host.run_worker(partial(self._run, done, call), name="steer", group="steer",
                             exclusive=True, exit_on_error=False)

    async def _run(self, done: str, call: Callable[[Any], Coroutine[Any, Any, Any]]) -> None:
        from memory.turn.steering import SteeringError, SteeringUnsupported

        try:
            await self.host.engine.run(call(self.host.agent))
        except (SteeringUnsupported, SteeringError) as exc:
            self.host.notify(str(exc), severity="warning", timeout=10)
            return
        self.host.notify(done)
        self.refresh()
