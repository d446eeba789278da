"""The repository's kept memory, as front-ends outside the app reach it: the MCP server
(``engram mcp``) and the per-prompt hook (``engram recall --brief``).

Reading (recall, the list, explain, the pinned memories, a brief) needs only the kept
facts (``cards``' ``kept`` store), the embedder and the staleness watch: no model, no
index, no session. Freshness is read against the working tree at each call
(``StalenessWatch.verdict``). Writing a memory (``remember``) goes through a ``cards``
session with shared memory, opened by ``memory.session`` (the one place a session is
assembled), so it is placed on code and revises what it contradicts exactly as a
statement in a chat does; ``forget`` and ``pin`` change the kept row, which every session
reads at its next turn. ``mem0`` and ``mem0r`` are served from their repository store
(``memory.recall.keeper_store``): no anchors, no pins, ``remember`` adds the text as given. Bad
input is a ``KeeperError`` with the reason.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory import _git
from memory.backends.cards.kept import Kept, KeptStore, KeptStoreError
from memory.backends.cards.stale import Anchor, StalenessWatch
from memory.home import repo_home
from memory.index.embed import MINILM, LazyEmbedder, cosine
from memory.recall.keeper_store import STORE_BACKENDS, MemoryRows

# the backends whose memory outlives a session and is kept per repository: ``cards``' kept
# facts, and mem0's / mem0r's store under the repository scope (``memory.recall.keeper_store``);
# the others rebuild their memory from one session's turns, so there is none to serve
BACKENDS = ("cards", *STORE_BACKENDS)
MAX_TEXT = 4000  # characters of one memory
MAX_QUERY = 2000
MAX_LIMIT = 50
LEXICAL_WEIGHT = 0.3  # a query word (over 3 letters) found in a memory adds this share


class Haystack:
    """The lower-cased texts of the memories, joined into one string so that a query's
    words are found in all of them by one scan each (a Python loop over 1,000 memories
    per recall took most of its time)."""

    def __init__(self, texts: list[str]) -> None:
        self.size = len(texts)
        parts = [t.lower().replace("\n", " ") for t in texts]
        self.text = "\n".join(parts)
        self.starts = np.cumsum([0] + [len(p) + 1 for p in parts[:-1]]) if parts else \
            np.zeros(0, dtype=np.int64)

    def share(self, query: str) -> np.ndarray:
        """For each memory, the share of the query's words (over 3 letters) it contains."""
        words = {w.lower() for w in query.split() if len(w) > 3}
        out = np.zeros(self.size, dtype=np.float32)
        if not words or not self.size:
            return out
        for word in words:
            ends = [m.start() for m in re.finditer(re.escape(word), self.text)]
            if ends:
                rows = np.unique(np.searchsorted(self.starts, ends, side="right") - 1)
                out[rows] += 1.0
        return out / len(words)


def _warm(backend: Any) -> None:
    """Load what the backend's first ``note`` needs (its ``warm``, when it has one); a
    failure here is met again, and said, by the call that needs it."""
    warm = getattr(backend, "warm", None)
    if warm is None:
        return
    try:
        warm()
    except Exception:  # reported by the remember that meets it
        return


class KeeperError(ValueError):
    """The call cannot be done as asked (the message says why)."""


@dataclass(frozen=True)
class Recalled:
    """One memory as a caller sees it."""

    id: str
    text: str
    subject: str
    locations: list[str]
    pinned: bool
    freshness: str  # fresh | changed | gone | unanchored
    note: str  # "changed since <commit>: <why>", "gone since <commit>: <why>", ""
    source: str
    session: str
    turn: int
    score: float = 0.0

    def line(self) -> str:
        where = f" [{', '.join(self.locations)}]" if self.locations else ""
        state = "" if self.freshness in ("fresh", "unanchored") else f" ({self.note})"
        return f"- {self.text}{where}{state}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _short(sha: str) -> str:
    return sha[:8] if sha else "the first commit"


def _text(value: object, what: str, most: int) -> str:
    text = str(value or "").strip()
    if not text:
        raise KeeperError(f"{what} is empty")
    if len(text) > most:
        raise KeeperError(f"{what} is {len(text)} characters; at most {most} are kept "
                          "(keep one fact or decision per memory)")
    if "\x00" in text:
        raise KeeperError(f"{what} contains a NUL character")
    return text


class Keeper:
    """One repository's kept memory."""

    def __init__(self, repo: Path, data_dir: Path | None = None, backend: str = "cards",
                 embed_model: str = MINILM) -> None:
        if backend not in BACKENDS:
            raise KeeperError(f"backend {str(backend)[:80]!r} keeps no memory across "
                              "sessions (it rebuilds its memory from one session's turns): "
                              f"serve {', '.join(BACKENDS)}")
        self.root = _git.toplevel(Path(repo).expanduser())
        self.data_dir = data_dir
        self.backend = backend
        self.home = repo_home(self.root, data_dir)
        self.embedder = LazyEmbedder(embed_model)
        self.store: KeptStore | MemoryRows = KeptStore(self.home, self.embedder.dim) \
            if backend == "cards" else MemoryRows(self.home, backend, self.embedder.dim)
        self.watch = StalenessWatch(self.root)
        self.rows: dict[str, Kept] = {}
        self._ids: list[str] = []
        self._matrix = np.zeros((0, self.embedder.dim), dtype=np.float32)
        self._words = Haystack([])
        self._loaded = False
        self._session: Any = None
        self._session_error: Exception | None = None
        self._opening: threading.Thread | None = None
        self._opened = threading.Event()
        self._reading = threading.RLock()  # ``warm`` on its thread, the calls on theirs
        self._instructions: Any = None  # memory.turn.instructions.Instructions, made on first use

    # -- reading -------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the kept facts again if any process wrote since the last read."""
        with self._reading:
            self._refresh()

    def _refresh(self) -> None:
        try:
            if self._loaded and not self.store.changed():
                return
            rows, vectors = self.store.load()
        except KeptStoreError as exc:
            raise KeeperError(str(exc)) from exc
        self.rows = {r.id: r for r in rows}
        self._ids = [r.id for r in rows if r.current and r.id in vectors]
        self._matrix = np.stack([vectors[i] for i in self._ids]).astype(np.float32) \
            if self._ids else np.zeros((0, self.embedder.dim), dtype=np.float32)
        self._words = Haystack([f"{self.rows[i].text} {self.rows[i].subject}"
                                for i in self._ids])
        self._loaded = True

    def warm(self) -> None:
        """Load the embedder and read the kept facts now (a server's first answer comes
        sooner); a failure here is met again, and said, by the call that needs it."""
        try:
            with self._reading:
                self.embedder.embed(["warm"])
                self.refresh()
        except Exception:  # reported by the next call that needs it
            return

    def get(self, memory_id: str) -> Kept:
        self.refresh()
        key = str(memory_id or "").strip().removeprefix("mem:")
        if not key:
            raise KeeperError("no memory id given")
        row = self.rows.get(key)
        if row is None:
            found = [r for r in self.rows.values() if len(key) >= 4 and r.id.startswith(key)]
            if len(found) == 1:
                return found[0]
            raise KeeperError(f"no memory {key[:80]!r} (ids are listed by `memories`)")
        return row

    def _recalled(self, row: Kept, score: float = 0.0) -> Recalled:
        freshness, note = "unanchored", ""
        if row.anchor_location:
            anchor = Anchor(row.anchor_location, row.anchor_blob, row.anchor_code,
                            row.anchor_head)
            freshness, why = self.watch.verdict(anchor)
            if freshness != "fresh":
                note = f"{freshness} since {_short(row.anchor_head)}: {why}"
        return Recalled(row.id, row.text, row.subject, list(row.locations), row.pinned,
                        freshness, note, row.source, row.session, row.turn, round(score, 4))

    def recall(self, query: str, limit: int = 5) -> list[Recalled]:
        """The memories most relevant to ``query``, pinned ones first, each with its
        freshness read now."""
        query = _text(query, "the query", MAX_QUERY)
        if not 1 <= int(limit) <= MAX_LIMIT:
            raise KeeperError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        self.refresh()
        pinned = [r for r in self.rows.values() if r.pinned and r.current]
        found: list[tuple[Kept, float]] = []
        wanted = max(0, int(limit) - len(pinned))
        if self._ids and wanted:
            vector = self.embedder.embed([query])[0]
            scores = cosine(np.asarray(vector, dtype=np.float32), self._matrix)
            scores = scores + LEXICAL_WEIGHT * self._words.share(query)
            have = {r.id for r in pinned}
            take = min(len(scores), wanted + len(have))
            best = np.argpartition(-scores, take - 1)[:take]
            for i in best[np.argsort(-scores[best], kind="stable")]:
                if self._ids[i] not in have and len(found) < wanted:
                    found.append((self.rows[self._ids[i]], float(scores[i])))
        return [self._recalled(r, 1.0) for r in pinned] + \
            [self._recalled(r, s) for r, s in found]

    def memories(self, filter: str = "") -> list[Recalled]:
        """The current memories, oldest first; ``filter``: those whose text, subject or
        location contains it (case-blind), or ``pinned``, ``stale`` (changed or gone)."""
        self.refresh()
        wanted = str(filter or "").strip().lower()
        rows = [r for r in self.rows.values() if r.current]
        if wanted == "pinned":
            rows = [r for r in rows if r.pinned]
        elif wanted and wanted != "stale":
            rows = [r for r in rows if wanted in f"{r.text} {r.subject} "
                    f"{' '.join(r.locations)}".lower()]
        out = [self._recalled(r) for r in rows]
        if wanted == "stale":
            out = [m for m in out if m.freshness in ("changed", "gone")]
        return out

    def pinned(self) -> list[Recalled]:
        return self.memories("pinned")

    def explain(self, memory_id: str) -> dict[str, Any]:
        """Where a memory came from and what became of it: its session and turn (with the
        developer's words of that turn when the session's transcript is there), what it
        superseded and what superseded it."""
        row = self.get(memory_id)
        state = "forgotten" if row.forgotten else (
            f"superseded by {row.superseded_by}" if row.superseded_by else "current")
        newer = self.rows.get(row.superseded_by)
        older = [r for r in self.rows.values() if r.superseded_by == row.id]
        out: dict[str, Any] = {
            "memory": self._recalled(row).as_dict(), "state": state,
            "source": {"chat": "a statement in an engram session",
                       "mcp": "remembered through the MCP server"}.get(
                           row.source, f"{self.backend}'s memory store ({row.source})"),
            "session": row.session, "turn": row.turn,
            "kept_at_commit": row.anchor_head,
            "superseded_by": {"id": newer.id, "text": newer.text} if newer else None,
            "supersedes": [{"id": r.id, "text": r.text} for r in older],
        }
        said = self._said(row)
        if said:
            out["said"] = said
        if isinstance(self.store, MemoryRows):  # mem0: what extraction and updates did
            try:
                out["history"] = self.store.history(row.id)
            except KeptStoreError as exc:
                raise KeeperError(str(exc)) from exc
        return out

    def _said(self, row: Kept) -> str:
        """The developer's words at the memory's turn, from its session's transcript."""
        if row.source != "chat" or row.turn < 0 or not row.session:
            return ""
        from memory._checks import valid_session_id
        from memory.transcript import read_transcript, sessions_dir

        path = sessions_dir(self.home) / f"{row.session}.jsonl"
        if not valid_session_id(row.session) or not path.is_file():
            return ""
        turn = next((t for t in read_transcript(path).turns if t.index == row.turn), None)
        return turn.user[:1000] if turn is not None else ""

    def instructions(self, paths: Iterable[str] = ()) -> tuple[str, list[str]]:
        """The project instructions (``memory/turn/instructions.py``: AGENTS.md, CLAUDE.md,
        ``.engram/rules``) that apply to ``paths`` and the root, nearest first, as one
        text, and their files; the files that could not be read are said in the text."""
        from memory.turn.instructions import Instructions, render

        if self._instructions is None:
            self._instructions = Instructions(self.root)
        found = self._instructions.applying(paths)
        text = render(found)
        problems = self._instructions.problems
        if problems:
            text += "\n\nNot read: " + "; ".join(f"{f} ({why})" for f, why in problems.items())
        return text.strip(), [i.file for i in found]

    # -- writing -------------------------------------------------------------------------
    def start(self, opener: Callable[[], Any] | None = None) -> None:
        """Open the writing session in a thread of its own (the index refresh it does can
        take a while on a large repository), and warm what its backend's first ``note``
        needs (``_warm``); ``remember`` waits for it."""
        if self._opening is not None:
            return

        def run() -> None:
            try:
                self._session = (opener or self._open_session)()
            except Exception as exc:  # reported by the next remember
                self._session_error = exc
            else:
                _warm(self._session.agent.backend)
            finally:
                self._opened.set()

        self._opening = threading.Thread(target=run, name="engram-keeper-session",
                                         daemon=True)
        self._opening.start()

    def _open_session(self) -> Any:
        from memory.session import SessionOptions, open_session

        said = (("cards_facts", "said"),) if self.backend == "cards" else ()
        return open_session(SessionOptions(
            repo=self.root, backend=self.backend, data_dir=self.data_dir, record=False,
            shared_memory=True, backend_options=said))

    async def _backend(self) -> Any:
        self.start()
        await asyncio.to_thread(self._opened.wait)
        if self._session is None:
            raise KeeperError(f"the memory session could not be opened: {self._session_error}")
        return self._session.agent.backend

    async def remember(self, text: str, about: str = "") -> Recalled:
        """Keep a fact or decision, placed on the code ``about`` or the text names."""
        text = _text(text, "the memory", MAX_TEXT)
        about = str(about or "").strip()
        if len(about) > 500:
            raise KeeperError("`about` is a location (path, path::qualname or a name), "
                              f"not {len(about)} characters")
        backend = await self._backend()
        if isinstance(self.store, MemoryRows):
            return await self._remember_in_store(backend, text, about)
        try:
            node = await backend.note(text, about)
        except ValueError as exc:
            raise KeeperError(str(exc)) from exc
        except KeptStoreError as exc:
            raise KeeperError(str(exc)) from exc
        kid = backend.shared.of_node.get(node.id, node.id.removeprefix("mem:"))
        self.refresh()
        return self._recalled(self.rows[kid]) if kid in self.rows else \
            Recalled(kid, text, node.subject, list(node.locations), False, "unanchored", "",
                     "mcp", "", -1)

    async def _remember_in_store(self, backend: Any, text: str, about: str) -> Recalled:
        """mem0/mem0r: the fact ADDed to the repository store as it is (the calling model
        did the extraction; no model call here), on the code ``about`` names."""
        from memory.backends.cards.shared import located

        try:
            where = [located(backend.env.repo, about)] if about else []
            vector = (await asyncio.to_thread(self.embedder.embed, [text]))[0]
            turn = max((m.updated for m in backend.memories.live()), default=0)
            memory, _ = backend.memories.add(text, where, vector, turn)
        except ValueError as exc:
            raise KeeperError(str(exc)) from exc
        self.refresh()
        row = self.rows.get(memory.id)
        return self._recalled(row) if row is not None else \
            Recalled(memory.id, text, "", where, False, "unanchored", "", "mcp", "", turn)

    def forget(self, memory_id: str) -> Recalled:
        row = self.get(memory_id)
        if row.forgotten:
            raise KeeperError(f"memory {row.id} is forgotten already")
        self._set(row, forgotten=True, pinned=False)
        return self._recalled(row)

    def pin(self, memory_id: str, pinned: bool = True) -> Recalled:
        if isinstance(self.store, MemoryRows):
            raise KeeperError(f"{self.backend} keeps no pins (its memories are ranked by "
                              "relevance only); serve cards to pin memories")
        row = self.get(memory_id)
        if not row.current:
            raise KeeperError(f"memory {row.id} is not current (see `explain`): "
                              "pin what replaced it")
        self._set(row, pinned=pinned)
        return self._recalled(self.rows[row.id])

    def _set(self, row: Kept, **values: object) -> None:
        try:
            self.store.set(row.id, **values)
        except KeptStoreError as exc:
            raise KeeperError(str(exc)) from exc
        self._loaded = False
        self.refresh()
