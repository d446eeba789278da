"""What the inspector shows besides the context: the backend's memories, the memory
updates of a turn that were skipped or failed, and what the model no longer saw: the
tool outputs masked, clipped or dropped within the turn (``turn.meta["tools"]["dropped"]``),
the calls a backend summarised with the summary, and, for the newest turn, the outputs
of past turns ``mask`` masked and the turns ``compact`` folded into its summary (plain
data; no widgets)."""

from __future__ import annotations

from typing import Any

from tui.widgets._inspector import MemoryRow, NoteBlock

CALL_CHARS = 70  # of a call's function and arguments in a line
SUMMARY_CHARS = 1200  # of a summary shown


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


def turn_notes(agent: Any, turn: Any) -> list[str | NoteBlock]:
    """Why memory did not learn from ``turn``, the session's structured-call counts, and
    what the model no longer saw (``unseen``)."""
    if agent is None:
        return []
    notes: list[str | NoteBlock] = [
        f"⚠ {i.get('op')} ({i.get('backend')}): {i.get('text', '')}"
        for i in getattr(agent, "memory_issues", []) if i.get("turn") == turn.index]
    note = structured_note(agent)
    if note:
        notes.append(note)
    return notes + instruction_notes(turn) + unseen(agent, turn)


def instruction_notes(turn: Any) -> list[NoteBlock]:
    """The project's instruction files in ``turn``'s context (nearest first), and, when
    they passed its room or a file could not be read, that too: nothing is cut silently."""
    meta = getattr(turn, "meta", None)
    placed = meta.get("instructions") if isinstance(meta, dict) else None
    if not isinstance(placed, dict):
        return []
    files = [str(f) for f in placed.get("files") or []]
    lines = [f"{len(files)} file(s), {int(placed.get('tokens', 0)):,} tok of "
             f"{int(placed.get('room', 0)):,} free: " + (", ".join(files) or "none")]
    if placed.get("over"):
        lines.append(f"⚠ over budget by {int(placed['over']):,} tok: not cut, the context "
                     "passes the window (shorten them or use a larger window)")
    lines += [f"⚠ {problem}" for problem in placed.get("problems") or []]
    return [NoteBlock("project instructions", tuple(lines))]


def _clip(text: str, chars: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= chars else flat[:chars - 1] + "…"


def within_turn(turn: Any) -> list[str]:
    """Each output of ``turn``'s tool loop the model stopped seeing: the call, its size,
    the tokens before and after, by whose policy; a summary with the calls it replaced."""
    from memory.acting.tools.trajectory import call_line  # not at start: the first paint

    meta = getattr(turn, "meta", None)
    tools = meta.get("tools") if isinstance(meta, dict) else None
    if not isinstance(tools, dict) or not tools.get("dropped"):
        return []
    calls = [c for c in tools.get("calls") or [] if isinstance(c, dict)]
    lines: list[str] = []
    for event in tools["dropped"]:
        step = int(event.get("step", 0))
        call = calls[step - 1] if 0 < step <= len(calls) else {}
        line = call_line(str(event.get("function", "?")), call.get("args") or {})
        chars = len(str(call.get("result", "")))
        lines.append(f"{event.get('action')} by {event.get('by')}: {_clip(line, CALL_CHARS)}"
                     f" · {chars:,} chars, {event.get('tokens_before', 0)} → "
                     f"{event.get('tokens_after', 0)} tok")
        if event.get("action") == "summarised" and event.get("text"):
            lines.append(f"summary of the calls up to {step}: "
                         f"{_clip(event['text'], SUMMARY_CHARS)}")
    return lines


def across_turns(agent: Any, turn: Any) -> list[NoteBlock]:
    """For the newest turn: the tool outputs ``mask`` masked in the history when it was
    observed, and ``compact``'s summary with the turns it replaced."""
    turns = getattr(agent, "turns", [])
    if not turns or turns[-1].index != turn.index:
        return []
    backend = getattr(agent, "backend", None)
    blocks: list[NoteBlock] = []
    masked = getattr(backend, "last_masked", None)
    if masked and getattr(backend, "masked_at", -1) == turn.index:
        blocks.append(NoteBlock(f"masked in the history from now on ({len(masked)})", tuple(
            f"turn {m['turn']}: {_clip(m['call'], CALL_CHARS)} · {m['chars']:,} chars → "
            f"{_clip(m['text'], CALL_CHARS)}" for m in masked)))
    done = getattr(backend, "last_compaction", None)
    if isinstance(done, dict) and done.get("after") == turn.index:
        first, last = done["turns"]
        lines = [f"summary of turns {first}-{last}: {_clip(done['summary'], SUMMARY_CHARS)}"]
        lines += [f"replaced turn {d['turn']}: {_clip(d['text'], SUMMARY_CHARS // 2)}"
                  for d in done["dropped"]]
        blocks.append(NoteBlock("summarised by compact", tuple(lines)))
    return blocks


def unseen(agent: Any, turn: Any) -> list[NoteBlock]:
    """What the model no longer saw, as titled blocks (none when nothing was dropped)."""
    within = within_turn(turn)
    blocks = [NoteBlock("not seen in this turn", tuple(within))] if within else []
    return blocks + across_turns(agent, turn)


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
