"""The context inspector: what the model saw for a turn, what it no longer saw (tool
outputs masked, calls and turns summarised), the backend's memories, and the steering
list (what the model will see next turn: pin, forget, edit)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui.widgets._steer import KEYS, SteerItem, SteerList

PREVIEW_CHARS = 160
CARD_FIELD_CHARS = 120  # of each field of a memory card (the evidence may be long)
SOURCE_CHARS = 28  # 48 columns less padding and scrollbar: indent, "12345 tok", 2 spaces, source


@dataclass(frozen=True)
class MemoryRow:
    text: str
    event: str = ""  # ADD / UPDATE / DELETE in the last turn, else ""


@dataclass(frozen=True)
class NoteBlock:
    """A titled group of lines among a turn's notes (shown under its own heading)."""

    title: str
    lines: tuple[str, ...]


class Inspector(VerticalScroll):
    """A side panel; the app calls ``show`` with plain data (attributes down)."""

    DEFAULT_CSS = """
    Inspector { width: 48; padding: 0 1; }
    Inspector Static { height: auto; }
    Inspector #steer-title { margin-top: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Select a turn to see its context.", id="inspector-body")
        yield Static("[b]next context[/b]", id="steer-title")
        yield Static(f"[dim]{KEYS}[/dim]", id="steer-keys")
        yield SteerList(id="steer")

    def show_steering(self, title: str, items: list[SteerItem]) -> None:
        """The items of the next context (``title`` says for which backend)."""
        self.query_one("#steer-title", Static).update(f"[b]next context[/b] · {title}")
        self.query_one(SteerList).set_items(items)

    def show(self, title: str, sections: list[dict], memories: list[MemoryRow] | None,
             notes: list[str | NoteBlock] | None = None) -> None:
        from memory.backends.cards.text import card_fields  # not at start: the first paint

        lines = [f"[b]{title}[/b]"]
        kinds: dict[str, list[dict]] = {}
        for section in sections:
            kinds.setdefault(section["kind"], []).append(section)
        total = sum(s["tokens"] for s in sections)
        lines.append(f"{len(sections)} sections, {total} tokens")
        plain = [n for n in notes or [] if isinstance(n, str)]
        if plain:
            lines.append("\n[b]memory updates[/b]")
            lines += [f"  {self._esc(note)}" for note in plain]
        for block in (n for n in notes or [] if isinstance(n, NoteBlock)):
            lines.append(f"\n[b]{self._esc(block.title)}[/b]")
            lines += [f"  {self._esc(line)}" for line in block.lines]
        for kind in ("system", "instructions", "history", "memory", "repo", "task", "calls"):
            group = kinds.get(kind, [])
            if not group:
                continue
            tokens = sum(s["tokens"] for s in group)
            lines.append(f"\n[b]{kind}[/b]  {len(group)} · {tokens} tok")
            for s in group:
                preview = " ".join(str(s.get("text", "")).split())[:PREVIEW_CHARS]
                source = str(s["source"]).removeprefix("instructions:")  # its file
                if len(source) > SOURCE_CHARS:  # one line per section: the tokens never wrap
                    source = "…" + source[-(SOURCE_CHARS - 1):]
                pin = "📌" if s.get("pinned") else "  "  # the developer pinned it (F4, p)
                lines.append(f"{pin}[dim]{s['tokens']:>5} tok[/dim]  {self._esc(source)}")
                card = card_fields(str(s.get("text", "")))
                if card is not None:  # a memory card: its fields, one line each
                    lines += self._card(*card)
                elif preview:
                    lines.append(f"    [dim]{self._esc(preview)}[/dim]")
        if memories is not None:
            lines.append(f"\n[b]memories[/b]  {len(memories)}")
            for row in memories:
                mark = f"[b]{row.event}[/b] " if row.event else ""
                lines.append(f"  {mark}{self._esc(row.text)}")
        self.query_one("#inspector-body", Static).update("\n".join(lines))

    @classmethod
    def _card(cls, card_id: str, notes: str, fields: list[tuple[str, str]]) -> list[str]:
        lines = [f"    [b]card[/b] {cls._esc(card_id)}"
                 + (f" [dim]· {cls._esc(notes)}[/dim]" if notes else "")]
        for label, value in fields:
            flat = " ".join(value.split())
            if len(flat) > CARD_FIELD_CHARS:
                flat = flat[:CARD_FIELD_CHARS - 1] + "…"
            lines.append(f"    {label.lower()}: [dim]{cls._esc(flat)}[/dim]")
        return lines

    @staticmethod
    def _esc(text: str) -> str:
        return text.replace("[", r"\[")
