"""RepoIndex: a repository's code as searchable, locatable chunks in LanceDB.

Chunks come from ``memory.index.chunks``; their short keys are embedded (vector
search) and their code is BM25-indexed (full-text search); ``search`` fuses the
two rankings. ``refresh`` re-chunks and re-embeds only the files whose git blob
id (untracked files: mtime) changed.

Nothing is loaded before it is needed: the tables open, the catalog is read and the
embedder loads on first use, and a refresh that finds the work tree as the last one
left it (``memory.index._manifest``) answers from one small file, without importing LanceDB.
"""

from __future__ import annotations

import difflib
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from memory import _git
from memory._checks import control_character
from memory.index import _manifest
from memory.index._tables import CHUNK_FIELDS, chunks_schema, files_schema
from memory.index.chunks import Chunk, chunk_file, supported
from memory.index.embed import MINILM, Embedder, LazyEmbedder, cosine, top_k
from memory.recent import Recent
from memory.store import Store, in_list

Progress = Callable[[int, int, str], None]  # (done, total, what)

VENDORED = frozenset({
    ".git", "node_modules", ".venv", "venv", "__pycache__", "site-packages", ".tox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "vendor", "third_party", ".eggs",
})
RRF_K = 60
FTS_REBUILD_ROWS = 2000  # rebuild the BM25 index once this many rows are unindexed
FUNCTION_KINDS = ("function", "method")
# Up to this many chunks the key vectors are also held in process (1.5 KB each) and
# searched exactly with numpy: ~1 ms where a LanceDB query costs ~16 ms at 5,700 rows.
MIRROR_MAX_ROWS = 50_000
SEARCHES_KEPT = 256  # recent searches answered again without the index


class LocationRefused(ValueError):
    """A location that resolves outside the repository, or is no file name at all."""


def refuse_control_characters(location: str) -> None:
    """``LocationRefused`` if ``location`` holds a NUL or another control character."""
    found = control_character(location)
    if found:
        raise LocationRefused(f"{location[:80]!r} holds a control character ({found})")


@dataclass(frozen=True)
class IndexConfig:
    max_file_bytes: int = 1_000_000
    # chunks embedded per call (a progress step); fewer calls leave the embedder's
    # threads waiting for the slowest batch of a call less often
    embed_batch: int = 512
    # Keys are embedded up to this many tokens: location, signature and the start of
    # the docstring fit; embedding cost on a CPU grows linearly with it.
    key_tokens: int = 64
    vendored: frozenset[str] = VENDORED


@dataclass
class IndexReport:
    """What one refresh did."""

    files_seen: int = 0
    files_changed: int = 0
    files_removed: int = 0
    chunks_embedded: int = 0
    chunks_total: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        return (f"{self.files_seen} files seen, {self.files_changed} re-indexed, "
                f"{self.files_removed} removed, {self.chunks_embedded} chunks embedded, "
                f"{self.chunks_total} in index, {self.seconds:.1f}s"
                + (f"; skipped: {skipped}" if skipped else ""))


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    score: float
    vector_rank: int | None = None
    text_rank: int | None = None


@dataclass(frozen=True)
class Located:
    chunk: Chunk
    exact: bool


class RepoIndex:
    """The chunks of one git repository, kept in a LanceDB ``Store``."""

    def __init__(self, root: Path, store: Store, embedder: Embedder,
                 config: IndexConfig | None = None) -> None:
        self.root = _git.toplevel(Path(root))
        self.store = store
        self.embedder = embedder
        self.config = config or IndexConfig()
        self._tables: tuple[Any, Any] | None = None
        self._loaded: dict[str, Chunk] | None = None
        self._mirror: tuple[list[str], np.ndarray, np.ndarray] | None = None
        self._lock = threading.RLock()
        # recent searches of the index as it is (a replay's backends ask the same query
        # each turn; an A/B asks it twice): dropped when the index changes
        self._searches: Recent[list[Hit]] = Recent(SEARCHES_KEPT)
        # how many refreshes found the work tree changed: what a reader of the files
        # caches is good while this stays as it was
        self.generation = 0

    # -- tables and catalog (opened and read on first use) ----------------------
    def _open(self) -> tuple[Any, Any]:
        with self._lock:
            if self._tables is None:
                chunks = self.store.table("chunks", chunks_schema(self.embedder.dim))
                files = self.store.table("files", files_schema())
                if chunks.count_rows() == 0 and files.count_rows() > 0:
                    # chunk table was recreated (another embedding dimension): index afresh
                    self.store.delete(files, "true")
                self._tables = (chunks, files)
            return self._tables

    @property
    def _chunks(self) -> Any:
        return self._open()[0]

    @property
    def _files(self) -> Any:
        return self._open()[1]

    @property
    def _catalog(self) -> dict[str, Chunk]:
        with self._lock:
            if self._loaded is None:
                self._load_catalog()
            assert self._loaded is not None
            return self._loaded

    def _load_catalog(self) -> None:
        rows = self.store.rows(self._chunks, ["id", *CHUNK_FIELDS])
        self._mirror = None
        if 0 < len(rows) <= MIRROR_MAX_ROWS:
            ids, matrix, extra = self.store.vectors(self._chunks, extra=("kind",))
            self._mirror = (ids, matrix, np.array(extra["kind"], dtype=object))
        self._loaded = {r["id"]: Chunk(**{k: r[k] for k in CHUNK_FIELDS}) for r in rows}

    def warm(self) -> None:
        """Read the catalog and load the embedder now (the app does this in the
        background, so the first query pays for neither)."""
        _ = self._catalog
        self.embedder.embed(["warm up"])

    def _nearest(self, vector: np.ndarray, depth: int,
                 kinds: tuple[str, ...] | None) -> list[str]:
        """Chunk ids by cosine similarity of their keys, best first."""
        _ = self._catalog  # loads the mirror too
        if self._mirror is None:
            where = in_list("kind", list(kinds)) if kinds else None
            rows = self.store.vector_search(self._chunks, vector, depth, where, ["id"])
            return [r["id"] for r in rows]
        ids, matrix, kind_of = self._mirror
        sims = cosine(vector, matrix)  # keys are normalised
        if kinds:
            sims = np.where(np.isin(kind_of, kinds), sims, -np.inf)
        return [ids[i] for i in top_k(sims, depth) if np.isfinite(sims[i])]

    def __len__(self) -> int:
        return len(self._catalog)

    def chunks(self, kinds: Iterable[str] | None = None) -> list[Chunk]:
        wanted = set(kinds) if kinds else None
        return [c for c in self._catalog.values() if wanted is None or c.kind in wanted]

    # -- indexing -----------------------------------------------------------------
    def _skip_reason(self, path: str) -> str | None:
        parts = PurePosixPath(path).parts
        if any(p in self.config.vendored for p in parts[:-1]):
            return "vendored"
        if not supported(path):
            return "unsupported type"
        full = self.root / path
        if full.is_symlink() or not full.is_file():
            return "not a regular file"
        if full.stat().st_size > self.config.max_file_bytes:
            return "too large"
        with full.open("rb") as fh:
            if b"\0" in fh.read(8192):
                return "binary"
        return None

    def _manifest(self) -> Path:
        return self.store.path / _manifest.NAME

    def _stamp(self, current: dict[str, str]) -> str:
        config = self.config
        return _manifest.stamp(current, (sorted(config.vendored), config.max_file_bytes,
                                         self.embedder.name, self.embedder.dim))

    def refresh(self, progress: Progress | None = None) -> IndexReport:
        """Bring the index up to date with the work tree; only changed files are re-embedded.

        A work tree exactly as the last refresh left it is answered from the manifest:
        no table is opened and no model is loaded.
        """
        started = time.perf_counter()
        report = IndexReport()
        current = _git.file_signatures(self.root)
        stamp = self._stamp(current)
        manifest = _manifest.read(self._manifest(), stamp)
        if manifest is not None and (self.store.path / "chunks.lance").is_dir():
            report.files_seen = len(current)
            report.chunks_total = int(manifest.get("chunks", 0))
            report.skipped.update(manifest.get("skipped") or {})
            report.seconds = time.perf_counter() - started
            return report
        _manifest.remove(self._manifest())  # stale until this refresh completes
        indexed = {r["path"]: r["sig"] for r in self.store.rows(self._files, ["path", "sig"])}
        report.files_seen = len(current)
        candidates: dict[str, str] = {}
        for path, sig in current.items():
            reason = self._skip_reason(path)
            if reason:
                report.skipped[reason] += 1
            else:
                candidates[path] = sig
        changed = [p for p, sig in candidates.items() if indexed.get(p) != sig]
        removed = [p for p in indexed if p not in candidates]
        report.files_changed, report.files_removed = len(changed), len(removed)
        stale = changed + removed
        known = self._stored_vectors([p for p in changed if p in indexed])
        for start in range(0, len(stale), 500):
            batch = stale[start:start + 500]
            self.store.delete(self._chunks, in_list("path", batch))
            self.store.delete(self._files, in_list("path", batch))
        new_chunks: list[Chunk] = []
        file_rows: list[dict[str, Any]] = []
        for n, path in enumerate(changed, 1):
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                report.skipped["unreadable"] += 1
                continue
            chunks = chunk_file(path, data)
            new_chunks.extend(chunks)
            file_rows.append({"path": path, "sig": candidates[path], "chunks": len(chunks)})
            if progress:
                progress(n, len(changed), f"parsed {path}")
        report.chunks_embedded = self._embed_and_store(new_chunks, progress, known)
        self.store.add(self._files, file_rows)
        if stale:
            self._maintain_indexes()
            with self._lock:
                self._loaded, self._mirror = None, None  # re-read on first use
                self._searches.clear()
                self.generation += 1
        report.chunks_total = self._chunks.count_rows()
        report.seconds = time.perf_counter() - started
        _manifest.write(self._manifest(), stamp, chunks=report.chunks_total,
                        skipped=dict(report.skipped))
        return report

    def _stored_vectors(self, paths: list[str]) -> dict[str, list[float]]:
        """The index's key vectors of ``paths`` by key: an unchanged key keeps its vector
        (an edit to one function of a file re-embeds that function, not the file)."""
        return {row["key"]: row["vector"] for start in range(0, len(paths), 500)
                for row in self.store.rows(self._chunks, ["key", "vector"],
                                           in_list("path", paths[start:start + 500]))}

    def _embed_and_store(self, chunks: list[Chunk], progress: Progress | None,
                         known: dict[str, list[float]]) -> int:
        """Store ``chunks`` with their key vectors, ``known`` or embedded now (the model
        loads only if some key is new); returns how many keys were embedded.

        Chunks go in parts, in order of key length (batches of similar length pad less:
        16% faster than file order, 2,048 keys). Two parts embed at once, so the
        embedder's threads start on the next part's batches while this part's last batch
        runs instead of waiting for it; a part's rows are written on a thread of their
        own while later parts embed."""
        size = self.config.embed_batch
        chunks = sorted(chunks, key=lambda c: len(c.key))
        embedded = stored = 0
        queued: set[str] = set()  # keys embedded, or being embedded, by this refresh
        pending: deque[tuple[list[Chunk], list[str], Future[np.ndarray] | None]] = deque()
        written: Future[None] | None = None

        def store_oldest() -> None:
            nonlocal embedded, stored, written
            part, missing, vectors = pending.popleft()
            if vectors is not None:
                known.update(zip(missing, (v.tolist() for v in vectors.result()), strict=True))
                embedded += len(missing)
            if written is not None:
                written.result()  # one part in writing at a time; a failure stops here
            rows = [{"id": c.id, **{k: getattr(c, k) for k in CHUNK_FIELDS},
                     "vector": known[c.key]} for c in part]
            written = writer.submit(self.store.add, self._chunks, rows)
            stored += len(part)
            if progress:
                progress(stored, len(chunks), "embedded chunks")

        with ThreadPoolExecutor(2, thread_name_prefix="index-embed") as ahead, \
                ThreadPoolExecutor(1, thread_name_prefix="index-writer") as writer:
            for start in range(0, len(chunks), size):
                part = chunks[start:start + size]
                missing = list(dict.fromkeys(c.key for c in part
                                             if c.key not in known and c.key not in queued))
                queued.update(missing)
                vectors = ahead.submit(self.embedder.embed, missing,
                                       max_tokens=self.config.key_tokens) if missing else None
                pending.append((part, missing, vectors))
                if len(pending) == 2:
                    store_oldest()
            while pending:
                store_oldest()
            if written is not None:
                written.result()
        return embedded

    def _maintain_indexes(self) -> None:
        stats = {ix.name: ix for ix in self._chunks.list_indices()}
        fts = next((ix for ix in stats.values() if "code" in ix.columns), None)
        unindexed = 0
        if fts is not None:
            try:
                unindexed = self._chunks.index_stats(fts.name).num_unindexed_rows
            except Exception:
                unindexed = FTS_REBUILD_ROWS
        if fts is None or unindexed >= FTS_REBUILD_ROWS:
            self.store.ensure_fts(self._chunks, "code")
        if not any("vector" in ix.columns for ix in stats.values()):
            self.store.ensure_vector_index(self._chunks)

    # -- retrieval -----------------------------------------------------------------
    def search(self, query: str, k: int = 10, kinds: Iterable[str] | None = None) -> list[Hit]:
        """Hybrid search: vector ranks over keys and BM25 ranks over code, fused (RRF)."""
        if not query.strip() or not self._catalog:
            return []
        kinds = tuple(kinds) if kinds else None
        hits = self._searches.get((query, k, kinds))
        if hits is None:
            hits = self._search(query, k, kinds)
            self._searches.put((query, k, kinds), hits)
        return list(hits)

    def _search(self, query: str, k: int, kinds: tuple[str, ...] | None) -> list[Hit]:
        where = in_list("kind", list(kinds)) if kinds else None
        depth = max(k * 3, 20)
        vector = self.embedder.embed([query])[0]
        by_vector = self._nearest(vector, depth, kinds)
        by_text = self.store.text_search(self._chunks, query, depth, where, ["id"])
        scores: dict[str, float] = {}
        vranks: dict[str, int] = {}
        tranks: dict[str, int] = {}
        for rank, chunk_id in enumerate(by_vector):
            vranks[chunk_id] = rank
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        for rank, row in enumerate(by_text):
            tranks[row["id"]] = rank
            scores[row["id"]] = scores.get(row["id"], 0.0) + 1.0 / (RRF_K + rank + 1)
        ranked = sorted(scores, key=lambda i: -scores[i])
        return [Hit(self._catalog[i], scores[i], vranks.get(i), tranks.get(i))
                for i in ranked if i in self._catalog][:k]

    def keyword(self, query: str, k: int = 10, kinds: Iterable[str] | None = None) -> list[Chunk]:
        """BM25 over the code alone, best first (CodeMem's retrieval)."""
        if not query.strip() or not self._catalog:
            return []
        where = in_list("kind", list(kinds)) if kinds else None
        rows = self.store.text_search(self._chunks, query, k, where, ["id"])
        return [self._catalog[r["id"]] for r in rows if r["id"] in self._catalog]

    def functions(self, query: str, k: int = 10) -> list[Hit]:
        """The top-k functions and methods for a query (LoCoEval's repository adaptation)."""
        return self.search(query, k, FUNCTION_KINDS)

    def relative(self, path: str) -> str:
        """``path`` made relative to the root; ``LocationRefused`` if it leads outside."""
        refuse_control_characters(path)
        root = self.root
        raw = Path(path)
        full = (raw if raw.is_absolute() else root / raw).resolve()
        if full != root and not full.is_relative_to(root):
            raise LocationRefused(f"{path!r} resolves outside the repository {root}")
        return full.relative_to(root).as_posix() if full != root else ""

    def locate(self, location: str) -> Located | None:
        """Find ``path::Qual.name``, ``path``, or a bare ``name``: exactly, else fuzzily.

        Fuzzy: candidates share the location's last component; the one whose full
        location is most similar to the asked one wins.
        """
        location = location.strip().strip("`")
        refuse_control_characters(location)
        path, sep, qual = location.partition("::")
        if not sep and ("/" in path or path.endswith((".py", ".md", ".pyi"))):
            qual = ""
        elif not sep:
            path, qual = "", location
        rel = self.relative(path) if path else ""
        for chunk in self._catalog.values():
            if rel and chunk.path == rel and chunk.qualname == qual:
                return Located(chunk, True)
        last = (qual.replace("/", ".").split(".")[-1] if qual
                else PurePosixPath(rel or path).name)
        if not last:
            return None
        wanted = f"{rel}::{qual}" if rel and qual else (rel or qual)
        candidates = [c for c in self._catalog.values()
                      if (c.name == last if qual else c.kind == "module" and c.name == last)]
        if not candidates:
            candidates = [c for c in self._catalog.values() if c.name.lower() == last.lower()]
        if not candidates:
            return None
        best = max(candidates, key=lambda c: (
            difflib.SequenceMatcher(None, wanted, c.location).ratio(), -len(c.location)))
        return Located(best, False)

    def source(self, chunk: Chunk) -> str:
        """The chunk's lines as they are in the work tree now (full class bodies included)."""
        try:
            lines = (self.root / chunk.path).read_text("utf-8", "replace").splitlines()
        except OSError:
            return chunk.code
        return "\n".join(lines[chunk.start - 1:chunk.end])


def open_repo_index(root: Path, data_dir: Path | str | None = None,
                    embedder: Embedder | None = None) -> RepoIndex:
    """The index of the repository at ``root`` in its data folder (not refreshed; the
    embedding model loads at the first embedding, not here)."""
    from memory.home import repo_home

    top = _git.toplevel(Path(root))
    store = Store(repo_home(top, data_dir) / "index.lance")
    return RepoIndex(top, store, embedder or LazyEmbedder())


def open_index(repo: Path, data_dir: Path | None = None, embed_model: str = MINILM,
               progress: Progress | None = None) -> tuple[RepoIndex, IndexReport]:
    """The repository's index, refreshed: only changed files are re-embedded, and the
    embedding model is loaded only if some file changed (or at the first search).
    ``engram index`` calls this without importing the session's parts (backends, LLM
    client, agent: a third of a one-file refresh's process)."""
    index = open_repo_index(Path(repo).expanduser(), data_dir, LazyEmbedder(embed_model))
    return index, index.refresh(progress)
