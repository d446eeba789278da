"""Read a memory backend's store for people: each memory with its event history."""

from __future__ import annotations

import time
from pathlib import Path

from memory import _git
from memory._checks import valid_session_id
from memory.backends._memstore import MemoryStore
from memory.home import repo_home
from memory.index.embed import MINILM_DIM
from memory.store import Store
from memory.transcript import latest_session, read_transcript, sessions_dir

MEMORY_BACKENDS = ("mem0", "mem0r")
REBUILT_BACKENDS = ("codemem", "cards", "compact", "amem", "ldagent", "memgpt")



class MemoryListingError(ValueError):
    """Nothing to list: unknown backend or no session."""


def scope_for(home: Path, backend: str, session: str | None, shared: bool) -> str:
    if backend not in MEMORY_BACKENDS:
        raise MemoryListingError(
            f"{backend!r} keeps no memory store; memory backends: "
            f"{', '.join(MEMORY_BACKENDS + REBUILT_BACKENDS)}")
    if shared:
        return f"{backend}:repo"
    if session is not None and not valid_session_id(session):
        raise MemoryListingError(f"{session[:80]!r} is not a session id")
    if session is None:
        latest = latest_session(home)
        record = read_transcript(latest).session if latest else None
        if record is None:
            raise MemoryListingError(f"no recorded session under {home}")
        session = record.id
    return f"{backend}:{session}"


def list_memories(repo: Path, backend: str, *, session: str | None = None,
                  shared: bool = False, data_dir: Path | None = None,
                  dim: int = MINILM_DIM) -> str:
    """A plain-text listing of the live memories of one scope, then every event."""
    home = repo_home(_git.toplevel(repo), data_dir)
    if backend == "cards" and shared:
        return list_kept(repo, data_dir)
    if backend == "cards":
        return list_cards(_session_path(home, session))
    if backend == "codemem":
        return list_codemem(_session_path(home, session))
    if backend in REBUILT_BACKENDS:
        from memory.recall._rebuilt import list_rebuilt

        path = _session_path(home, session)
        listing = list_rebuilt(path, backend)
        if listing is None:
            raise MemoryListingError(
                f"{path.name}: {backend} never ran in this session (switch to it with "
                f"/backend {backend}, or replay the session with --backends {backend})")
        return listing
    scope = scope_for(home, backend, session, shared)
    store = MemoryStore(Store(home / "index.lance"), scope, dim)
    lines = [f"{scope}: {len(store)} memories"]
    for memory in store.live():
        where = f"  [{', '.join(memory.locations)}]" if memory.locations else ""
        lines.append(f"  {memory.id[:8]}  {memory.text}{where}")
    events = store.events()
    if events:
        lines.append("history:")
    for event in events:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at))
        change = event.new if event.op == "ADD" else (
            event.old if event.op in ("DELETE", "FORGET") else f"{event.old} -> {event.new}")
        lines.append(f"  {stamp}  turn {event.turn:>3}  {event.op:6} {event.memory_id[:8]}  "
                     f"{change}")
    return "\n".join(lines)


def _session_path(home: Path, session: str | None) -> Path:
    if session is None:
        latest = latest_session(home)
        if latest is None:
            raise MemoryListingError(f"no recorded session under {home}")
        return latest
    if not valid_session_id(session) or not (sessions_dir(home) / f"{session}.jsonl").is_file():
        raise MemoryListingError(f"no recorded session {session[:80]!r} under {home}")
    return sessions_dir(home) / f"{session}.jsonl"


def list_kept(repo: Path, data_dir: Path | None = None) -> str:
    """The facts ``cards`` keeps for the repository (``shared_memory``), current ones with
    their freshness read now, then those superseded or forgotten."""
    from memory.recall.keeper import Keeper, KeeperError

    try:
        keeper = Keeper(repo, data_dir)
        current = keeper.memories()
    except KeeperError as exc:
        raise MemoryListingError(str(exc)) from exc
    past = [r for r in keeper.rows.values() if not r.current]
    lines = [f"cards:repo: {len(current)} kept facts, {len(past)} superseded or forgotten"]
    lines += [f"  {m.id}  {'[pinned] ' if m.pinned else ''}{m.line()[2:]}" for m in current]
    if past:
        lines.append("superseded or forgotten:")
    lines += [f"  {r.id}  {r.text}  ("
              f"{'forgotten' if r.forgotten else f'superseded by {r.superseded_by}'})"
              for r in past]
    return "\n".join(lines)


def list_codemem(path: Path) -> str:
    """CodeMem's two memories as its ``memory`` records in a transcript left them.

    CodeMem keeps no store: every change it made (a repository block ADDed or
    DROPped by the AST selector, a session BLOCK with its note, a conflict) is a
    transcript record, so folding them in order gives its memory at the session's end.
    """
    records = [r for r in read_transcript(path).memories if r.backend == "codemem"]
    if not records:
        raise MemoryListingError(
            f"{path.name}: codemem never ran in this session (switch to it with "
            "/backend codemem, or replay the session with --backends codemem)")
    context: dict[str, str] = {}
    blocks: list[str] = []
    other: list[str] = []
    for record in records:
        op, what = record.op, record.id
        turn = "?" if record.turn is None else str(record.turn)
        if op == "ADD":
            context.setdefault(what, turn)
        elif op == "DROP":
            context.pop(what, None)
        elif op == "BLOCK":
            blocks.append(f"  turn {turn:>3}  {record.text or what}")
        else:  # conflict, skipped, error
            other.append(f"  turn {turn:>3}  {op:8} {record.text}")
    lines = [f"codemem:{path.stem}: {len(context)} code context blocks, "
             f"{len(blocks)} code session blocks"]
    lines += ["code context memory:"] + [f"  {loc}  (since turn {t})"
                                         for loc, t in context.items()]
    lines += ["code session memory:", *blocks]
    if other:
        lines += ["other events:", *other]
    return "\n".join(lines)


def list_cards(path: Path) -> str:
    """The ``cards`` context graph as its ``memory`` records in a transcript left it:
    current nodes, edges, and the superseded facts with what revised them."""
    records = [r for r in read_transcript(path).of_type("memory")
               if r.get("backend") == "cards"]
    if not records:
        raise MemoryListingError(
            f"{path.name}: cards never ran in this session (switch to it with "
            "/backend cards, or replay the session with --backends cards)")
    nodes: dict[str, str] = {}
    superseded: dict[str, str] = {}
    edges: list[str] = []
    other: list[str] = []
    for record in records:
        op, what, text = str(record.get("op")), str(record.get("id", "")), \
            str(record.get("text", ""))
        if op == "ADD":
            nodes[what] = text
        elif op == "SUPERSEDE":
            superseded[what] = text
        elif op == "RESTORE":  # a revision taken back: current again, its edge gone
            superseded.pop(what, None)
            edges = [e for e in edges if not e.endswith(f"-conflict-> {what}")]
        elif op == "LINK":
            edges += [e.strip() for e in text.split(";") if e.strip()]
        else:  # skipped, error
            other.append(f"  {op:8} {text}")
    current = {k: v for k, v in nodes.items() if k not in superseded}
    lines = [f"cards:{path.stem}: {len(current)} current nodes, {len(superseded)} superseded, "
             f"{len(edges)} edges"]
    lines += ["nodes:"] + [f"  {node_id}  {text}" for node_id, text in current.items()]
    lines += ["edges:"] + [f"  {edge}" for edge in edges]
    lines += ["superseded (history, never shown as current):"]
    lines += [f"  {node_id}  {text}" for node_id, text in superseded.items()]
    if other:
        lines += ["other events:", *other]
    return "\n".join(lines)
