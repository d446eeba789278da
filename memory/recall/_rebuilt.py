"""The memories of backends that keep them in the process (compact, amem, ldagent,
memgpt), rebuilt for ``engram memories`` from the ``memory`` records they left in a
session's transcript.

Each record is one change (a summary written, a note added, linked or evolved, an
event or persona trait, a core block edited, an archival passage inserted); folding
them in order gives the memory at the session's end. A ``switch`` to the backend starts
a fresh instance, so its memory is folded anew from the records of its catch-up (those
just before the ``switch`` record).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.transcript import read_transcript

Records = list[dict[str, Any]]


def _compact(records: Records) -> list[str]:
    summaries = [r for r in records if r.get("op") == "SUMMARIZE"]
    if not summaries:
        return ["no compaction yet: every turn is still verbatim"]
    last = summaries[-1]
    turns = str(last.get("id", "")).removeprefix("summary:")
    return [f"running summary of turns {turns} ({len(summaries)} compactions):",
            *(f"  {line}" for line in str(last.get("text", "")).splitlines())]


def _amem(records: Records) -> list[str]:
    notes: dict[str, dict[str, str]] = {}
    for r in records:
        op, note = r.get("op"), str(r.get("id", ""))
        if op == "ADD":
            notes[note] = {"note": str(r.get("text", ""))}
        elif op == "LINK" and note in notes:
            notes[note]["links"] = str(r.get("text", "")).split(" -> ", 1)[-1]
        elif op == "EVOLVE" and note in notes:
            notes[note]["evolved"] = str(r.get("text", ""))
    lines = [f"{len(notes)} notes:"]
    for note, parts in notes.items():
        lines.append(f"  {note}  {parts['evolved'] if 'evolved' in parts else parts['note']}")
        if "links" in parts:
            lines.append(f"        links: {parts['links']}")
    return lines


def _ldagent(records: Records) -> list[str]:
    events = {str(r.get("id")): str(r.get("text", "")) for r in records if r.get("op") == "EVENT"}
    personas: dict[str, list[str]] = {"developer": [], "assistant": []}
    for r in records:
        if r.get("op") == "PERSONA":
            traits = personas.setdefault(str(r.get("id")), [])
            if r.get("text") not in traits:
                traits.append(str(r.get("text", "")))
    lines = [f"{len(events)} events:", *(f"  {e}  {text}" for e, text in events.items())]
    for who, traits in personas.items():
        lines += [f"persona of the {who}: {len(traits)} traits", *(f"  - {t}" for t in traits)]
    return lines


def _memgpt(records: Records) -> list[str]:
    blocks: dict[str, str] = {"developer": "", "task": ""}
    archival: dict[str, str] = {}
    summary = ""
    for r in records:
        op, text = r.get("op"), str(r.get("text", ""))
        if op in ("APPEND", "REPLACE"):
            blocks[str(r.get("id"))] = text
        elif op == "INSERT":
            archival[str(r.get("id"))] = text
        elif op == "SUMMARIZE":
            summary = text
    lines = ["core memory:"]
    for label, text in blocks.items():
        lines.append(f"  <{label}> {len(text)} characters")
        lines += [f"    {line}" for line in text.splitlines()]
    lines.append(f"archival memory: {len(archival)} passages")
    lines += [f"  {memory_id[:8]}  {text}" for memory_id, text in archival.items()]
    if summary:
        lines += ["summary of the evicted messages:", *(f"  {s}" for s in summary.splitlines())]
    return lines


FOLDS: dict[str, Callable[[Records], list[str]]] = {
    "compact": _compact, "amem": _amem, "ldagent": _ldagent, "memgpt": _memgpt}


def list_rebuilt(path: Path, backend: str) -> str | None:
    """The backend's memory at the end of the session in ``path``; None if it never ran."""
    transcript = read_transcript(path)
    session = transcript.session
    started = session is not None and session.backend == backend
    records: Records = []
    recent: Records = []  # this backend's records since the last record of another kind
    for record in (r.data for r in transcript.records):  # validated (memory.records)
        if record["type"] == "memory":
            if record.get("backend") == backend:
                records.append(record)
                recent.append(record)
            continue
        if record["type"] == "switch" and record.get("to") == backend:
            # a fresh instance: its catch-up's records come just before the switch record
            records, started = list(recent), True
        recent = []
    if not started and not records:
        return None
    problems = [r for r in records if r.get("op") in ("skipped", "error")]
    lines = [f"{backend}:{path.stem}", *FOLDS[backend](records)]
    if problems:
        lines.append(f"{len(problems)} updates skipped or failed:")
        lines += [f"  {r.get('op')}: {r.get('text', '')}" for r in problems]
    return "\n".join(lines)
