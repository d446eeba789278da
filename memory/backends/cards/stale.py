"""Memory that goes stale with the code: each unit tied to a symbol remembers the git
blob of its file and the symbol's code when it was true.

At every observed turn the files of anchored units are compared with the work tree
(``git hash-object``); a changed file is re-chunked, and a unit whose symbol's code
changed or vanished is marked ``stale: changed in <sha>`` (HEAD's short sha when a
commit moved it, else "the working tree"). A symbol whose code is still the same is
re-validated: its anchor moves to the new blob. No model is involved.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from memory import _git
from memory.backends.cards.graph import ContextGraph, Node
from memory.chunks import chunk_file


def _code_hash(code: str) -> str:
    return hashlib.sha1(" ".join(code.split()).encode()).hexdigest()


@dataclass
class Anchor:
    location: str  # path::qualname or path
    blob: str
    code: str  # hash of the symbol's code
    head: str


class StalenessWatch:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.anchors: dict[str, Anchor] = {}

    def _blob(self, path: str) -> str:
        return _git.blob_id(self.root, path)

    def _code(self, location: str) -> str | None:
        """The symbol's code in the work tree now, or None when it is gone."""
        path = location.partition("::")[0]
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            return None
        for chunk in chunk_file(path, data):
            if chunk.location == location:
                return chunk.code
        return None

    def anchor(self, node: Node) -> None:
        """Remember what ``node``'s first location looks like now."""
        if not node.locations or node.id in self.anchors:
            return
        location = node.locations[0]
        code = self._code(location)
        if code is None:
            return
        self.anchors[node.id] = Anchor(location, self._blob(location.partition("::")[0]),
                                       _code_hash(code), _git.head(self.root))

    def check(self, graph: ContextGraph) -> list[Node]:
        """Mark the units whose symbol changed since they were anchored; returns them."""
        blobs: dict[str, str] = {}
        marked: list[Node] = []
        head = ""
        for node_id, anchor in self.anchors.items():
            node = graph.nodes.get(node_id)
            if node is None or node.stale or not node.current:
                continue
            path = anchor.location.partition("::")[0]
            if path not in blobs:
                blobs[path] = self._blob(path)
            if blobs[path] == anchor.blob:
                continue
            code = self._code(anchor.location)
            if code is not None and _code_hash(code) == anchor.code:
                anchor.blob = blobs[path]  # re-validated: the symbol is unchanged
                continue
            head = head or _git.head(self.root)
            where = head[:8] if head and head != anchor.head else "the working tree"
            node.stale = f"{anchor.location} changed in {where}" if code is not None \
                else f"{anchor.location} removed in {where}"
            marked.append(node)
        return marked
