"""What the inspector shows besides the context: the backend's memories and the memory
updates of a turn that were skipped or failed (plain data; no widgets)."""

from __future__ import annotations

from typing import Any

from tui.widgets._inspector import MemoryRow


def memory_rows(backend: Any) -> list[MemoryRow] | None:
    """The backend's memories (marked with the last turn's events), or None if it keeps none."""
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


def turn_notes(agent: Any, turn: Any) -> list[str]:
    """Why memory did not learn from ``turn``, and the session's structured-call counts."""
    if agent is None:
        return []
    notes = [f"⚠ {i.get('op')} ({i.get('backend')}): {i.get('text', '')}"
             for i in getattr(agent, "memory_issues", []) if i.get("turn") == turn.index]
    note = structured_note(agent)
    if note:
        notes.append(note)
    return notes


def structured_note(agent: Any) -> str:
    """The session's structured calls: how many, the mode that answered them (and the
    modes refused on the way), parsed and failed, memory updates skipped; "" if none."""
    stats = getattr(getattr(agent, "llm", None), "stats", None)
    calls = getattr(stats, "calls", 0)
    if not calls:
        return ""
    modes = ", ".join(f"{mode} {n}" for mode, n in stats.modes().items()) or "none answered"
    refused = getattr(stats, "refused", 0)
    llm = agent.llm
    learned = f"; mode now {llm.structured_mode()}" if refused else ""
    skipped = sum(1 for i in getattr(agent, "memory_issues", []) if i.get("op") == "skipped")
    return (f"structured calls this session: {calls} via {modes}"
            + (f" ({refused} refused, stepped down{learned})" if refused else "")
            + f", parsed {getattr(stats, 'parsed', 0)}, failed {getattr(stats, 'failed', 0)}"
            + f", memory updates skipped {skipped}")


def turn_meta(turn: Any) -> str:
    """The line under an answer: backend, model, tokens, context; regenerated or stopped."""
    meta = (f"{turn.backend} · {turn.model} · {turn.usage.tokens} tok · "
            f"context {sum(c['tokens'] for c in turn.context)} tok")
    for noted in turn.meta.values():
        if isinstance(noted, dict) and noted.get("regenerated"):
            meta += f" · regenerated after {len(noted.get('conflicts', []))} conflict(s)"
    if (turn.meta.get("stopped") or {}).get("reason") == "repetition":
        meta += " · stopped: it repeated itself"
    return meta
