"""A ``cards`` graph joined to the repository's kept facts (``kept``), both ways.

``sync`` brings what other processes kept (a chat's facts, the server's memories, pins,
forgets, revisions) into this graph; ``keep`` writes this session's new facts and
revisions out. A kept fact enters a graph as a ``fact`` node ``mem:<kept id>`` with its
vector and its anchor in the staleness watch, so it is retrieved, revised and marked
stale like the session's own facts. A session's own facts keep their ``fact:T:N`` ids in
its graph; their kept ids are derived from the session and the node id, so keeping them
again (a resume rebuilds the graph from the transcript) adds nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.backends.cards.graph import ContextGraph, Node
from memory.backends.cards.kept import FORGOTTEN, Kept, KeptStore
from memory.backends.cards.stale import Anchor, StalenessWatch


def kept_id(session: str, node_id: str) -> str:
    """The kept id of a session's node (the same on every rebuild of the session)."""
    return hashlib.sha1(f"{session}\0{node_id}".encode()).hexdigest()[:12]


def node_id(kid: str) -> str:
    return f"mem:{kid}"


def located(repo: Any, about: str) -> str:
    """The repository location ``about`` names (a path, ``path::qualname`` or a name), for
    a fact kept outside a turn. ValueError when it is outside the repository or names
    nothing there."""
    from memory.index.repo import LocationRefused

    if repo is None:
        raise ValueError("no repository is open to place a memory on")
    try:
        found = repo.locate(about)
    except LocationRefused as exc:
        raise ValueError(f"{about[:200]!r} is outside the repository") from exc
    if found is None:
        raise ValueError(f"{about[:200]!r} names nothing in the repository (give a path, "
                         "path::qualname or a function or class name)")
    return str(found.chunk.location)


@dataclass
class SharedFacts:
    """The kept facts as this process last read them, and this graph's ties to them."""

    store: KeptStore
    graph: ContextGraph
    watch: StalenessWatch | None
    session: str
    count: object  # the env's token counter
    rows: dict[str, Kept] = field(default_factory=dict)  # kept id -> row
    of_node: dict[str, str] = field(default_factory=dict)  # graph node id -> kept id
    by_kept: dict[str, str] = field(default_factory=dict)  # kept id -> graph node id
    pinned: set[str] = field(default_factory=set)  # graph node ids (the backend's set)

    def node_of(self, kid: str) -> Node | None:
        nid = self.by_kept.get(kid)
        return self.graph.nodes.get(nid) if nid is not None else None

    def _tie(self, nid: str, kid: str) -> None:
        self.of_node[nid], self.by_kept[kid] = kid, nid

    # -- in ------------------------------------------------------------------------------
    def sync(self, force: bool = False) -> list[Node]:
        """Read what any process kept since the last read; the nodes added to the graph.
        This session's own facts are not added (a resume rebuilds them from its
        transcript, and ``keep`` ties them to their rows again)."""
        if not force and not self.store.changed():
            return []
        rows, vectors = self.store.load()
        added: list[Node] = []
        for row in rows:
            self.rows[row.id] = row
            nid = self.by_kept.get(row.id, node_id(row.id))
            node = self.graph.nodes.get(nid)
            if node is None and row.session == self.session and row.source == "chat":
                continue
            if node is None:
                count = self.count  # type: ignore[assignment]
                node = Node(nid, "fact", f"memory:{row.session or row.source}", row.text,
                            count(row.text), 1.0, row.subject,  # type: ignore[operator]
                            list(row.locations), row.turn)
                self.graph.add(node, vectors.get(row.id))
                self._tie(nid, row.id)
                added.append(node)
                if self.watch is not None and row.anchor_location:
                    self.watch.anchors.setdefault(nid, Anchor(
                        row.anchor_location, row.anchor_blob, row.anchor_code,
                        row.anchor_head))
            self._state(node, row)
        return added

    def _state(self, node: Node, row: Kept) -> None:
        if row.forgotten:
            node.superseded_by = FORGOTTEN
        elif row.superseded_by:
            newer = self.node_of(row.superseded_by)
            node.superseded_by = newer.id if newer is not None else f"mem:{row.superseded_by}"
        if row.pinned and row.current:
            self.pinned.add(node.id)
        else:
            self.pinned.discard(node.id)

    # -- out -----------------------------------------------------------------------------
    def keep(self, node: Node, vector: np.ndarray, source: str = "chat") -> Kept:
        """Keep ``node`` (a fact of this session); the kept row (the existing one when it
        was kept already)."""
        kid = self.of_node.get(node.id) or (node.id.removeprefix("mem:")
                                            if node.id.startswith("mem:")
                                            else kept_id(self.session, node.id))
        self._tie(node.id, kid)
        if kid in self.rows:
            self._state(node, self.rows[kid])
            return self.rows[kid]
        anchor = self.watch.anchors.get(node.id) if self.watch is not None else None
        row = Kept(kid, node.content, node.subject, list(node.locations), self.session,
                   node.turn, source,
                   anchor_location=anchor.location if anchor else "",
                   anchor_blob=anchor.blob if anchor else "",
                   anchor_code=anchor.code if anchor else "",
                   anchor_head=anchor.head if anchor else "")
        if not self.store.add(row, vector):  # kept by another process meanwhile
            self.sync(force=True)
        self.rows[kid] = row
        return row

    def superseded(self, new: Node, old: Node) -> None:
        kid, newer = self.of_node.get(old.id), self.of_node.get(new.id)
        if kid is not None and newer is not None:
            self.store.set(kid, superseded_by=newer)
            self.rows[kid].superseded_by = newer

    def restored(self, node: Node) -> None:
        kid = self.of_node.get(node.id)
        if kid is not None:
            self.store.set(kid, superseded_by="")
            self.rows[kid].superseded_by = ""

    def forget(self, node: Node) -> None:
        kid = self.of_node.get(node.id)
        node.superseded_by = FORGOTTEN
        self.pinned.discard(node.id)
        if kid is not None:
            self.store.set(kid, forgotten=True, pinned=False)
            self.rows[kid].forgotten, self.rows[kid].pinned = True, False

    def pin(self, node: Node, pinned: bool) -> None:
        kid = self.of_node.get(node.id)
        (self.pinned.add if pinned else self.pinned.discard)(node.id)
        if kid is not None:
            self.store.set(kid, pinned=pinned)
            self.rows[kid].pinned = pinned
