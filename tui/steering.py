"""Steering the memory from the inspector: the next context's items, pinned, forgotten
or edited (keys p, d, e on the list; F4 focuses it). Pins are quick and done in the
handler; a forget (after confirmation) or an edit (in a modal) runs on the engine in a
worker, since a backend may re-embed or write its store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work

from tui.widgets._inspector import Inspector
from tui.widgets._steer import SteerItem, SteerList

if TYPE_CHECKING:
    from tui.app import EngramApp


def steer_items(agent: Any) -> list[SteerItem]:
    """What the model will see next turn, as far as the app knows without asking the
    backend (which may call the LLM): the pins, the latest context's sections (less what
    was forgotten since, with edited texts), then the backend's other memories."""
    from memory.steering import memories_of, unsupported

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
    """Mixed into ``EngramApp``."""

    def refresh_steering(self: EngramApp) -> None:
        inspector = self.query_one(Inspector)
        if self.agent is None or not inspector.display:
            return
        pack = self.agent.last_pack
        where = f"{self.agent.backend.name}, after turn #{len(self.agent.turns) - 1}" \
            if pack is not None else self.agent.backend.name
        inspector.show_steering(where, steer_items(self.agent))

    def action_steer(self: EngramApp) -> None:
        """Show the inspector and focus its next-context list."""
        inspector = self.query_one(Inspector)
        if not inspector.display:
            self.action_toggle_inspector()
        self.refresh_steering()
        listing = self.query_one(SteerList)
        listing.focus()
        self.call_after_refresh(listing.scroll_visible, animate=False)

    def _steering_refusal(self: EngramApp) -> str:
        if self.agent is None:
            return "engram is still starting"
        if self.operation:
            return f"{self.operation}; wait for it or press Esc to cancel it"
        return ""

    def on_steer_list_requested(self: EngramApp, event: SteerList.Requested) -> None:
        from memory.steering import unsupported

        refusal = self._steering_refusal()
        if refusal:
            self.notify(refusal, severity="warning")
            return
        item, backend = event.item, self.agent.backend
        if event.op == "pin":
            self.toggle_pin(item)
            return
        why = unsupported(backend, event.op)
        if why is None and not item.forgettable:
            why = ("repository code is not a memory: pin it (p), or change the file"
                   if item.kind == "repo" else f"{item.source} is not one of "
                   f"{backend.name}'s memories now")
        if why is None and event.op == "edit" and not item.editable:
            self.steer_edit(item, item.text)  # the backend says why it cannot
            return
        if why is not None:
            self.notify(why, severity="warning", timeout=10)
            return
        if event.op == "forget":
            self._confirm_forget(item)
        else:
            self._ask_edit(item)

    def toggle_pin(self: EngramApp, item: SteerItem) -> None:
        if item.pinned:
            self.agent.unpin(item.source)
            self.notify(f"unpinned {item.source}")
        else:
            self.agent.pin(item.kind, item.source, self._sections_of(item))
            self.notify(f"pinned {item.source}: it is in every next context")
        self.refresh_steering()

    def _sections_of(self: EngramApp, item: SteerItem) -> list[Any]:
        from memory.types import Section

        pack = self.agent.last_pack
        found = [s for s in (pack.sections if pack is not None else [])
                 if s.source == item.source]
        if found and not (item.kind == "memory" and item.forgettable):
            return found
        text = f"- {item.text}" if item.kind == "memory" else item.text
        return [Section(item.kind, item.source, text,  # type: ignore[arg-type]
                        self.agent.llm.count_tokens(text))]

    def _confirm_forget(self: EngramApp, item: SteerItem) -> None:
        from tui.screens import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.steer_forget(item)

        preview = " ".join(item.text.split())[:200]
        self.push_screen(ConfirmScreen(
            f"Forget this memory of {self.agent.backend.name}?\n\n{preview}\n\n"
            "It is deleted from the backend and the forget is recorded in the session."),
            answered)

    def _ask_edit(self: EngramApp, item: SteerItem) -> None:
        from tui.screens import EditScreen

        def edited(text: str | None) -> None:
            if text is not None and text.strip() != item.text.strip():
                self.steer_edit(item, text)

        self.push_screen(EditScreen(f"edit {item.source} ({self.agent.backend.name})",
                                    item.text), edited)

    @work(group="steer", exclusive=True, exit_on_error=False)
    async def steer_forget(self: EngramApp, item: SteerItem) -> None:
        from memory.steering import SteeringError, SteeringUnsupported

        try:
            await self.engine.run(self.agent.forget(item.source))
        except (SteeringUnsupported, SteeringError) as exc:
            self.notify(str(exc), severity="warning", timeout=10)
            return
        self.notify(f"forgot {item.source}")
        self.refresh_steering()

    @work(group="steer", exclusive=True, exit_on_error=False)
    async def steer_edit(self: EngramApp, item: SteerItem, text: str) -> None:
        from memory.steering import SteeringError, SteeringUnsupported

        try:
            await self.engine.run(self.agent.edit(item.source, text))
        except (SteeringUnsupported, SteeringError) as exc:
            self.notify(str(exc), severity="warning", timeout=10)
            return
        self.notify(f"edited {item.source}")
        self.refresh_steering()
