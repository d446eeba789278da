"""Memory that goes stale with the code: each unit tied to a symbol remembers the git
blob of its file and the symbol's code when it was true.

At every observed turn the files of anchored units are compared with the work tree
(``git hash-object``); a changed file is re-chunked, and a unit whose symbol's code
changed or vanished is marked ``stale: changed in <sha>`` (the short sha of the last
commit since the anchor that touched the file, else "the working tree"). A commit
engram's edit engine made (``memory.acting.edits``: its message carries the ``Engram-Edit``
trailer) is a change like any other, and the reason says so ("by engram's edit").
A symbol whose code is still the same is re-validated: its anchor moves to the new
blob; a stale unit whose symbol's code is back to what it was (``/undo``, a revert) is
valid again (``check`` lists it in ``revalidated``). ``verdict`` reads one anchor against
the working tree now without marking anything (the MCP server's recall). No model is
involved.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from memory import _git
from memory.backends.cards.graph import ContextGraph, Node
from memory.index.chunks import chunk_file


def _blob_of(data: bytes) -> str:
    """Git's blob id of ``data`` (``git hash-object`` on a file without filters)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


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
        self.revalidated: list[Node] = []  # stale units valid again at the last check

    def _blob(self, path: str) -> str:
        return _git.blob_id(self.root, path)

    def _code(self, location: str, head: str = "") -> str | None:
        """The symbol's code in the work tree now (in commit ``head`` when given), or None
        when it is gone."""
        path = location.partition("::")[0]
        # the edit engine's git plumbing only for a commit's code (the package is large
        # and a fresh memory, the usual verdict, needs only the work tree's bytes)
        from memory.acting.edits.gitstate import GitFailed
        from memory.acting.edits.gitstate import text as git_text

        try:
            data = (self.root / path).read_bytes() if not head else \
                git_text(self.root, "show", f"{head}:{path}").encode("utf-8", "surrogateescape")
        except (OSError, GitFailed):
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
        """Mark the units whose symbol changed since they were anchored; returns them.
        Units whose symbol is back to its anchored code are cleared (``revalidated``)."""
        blobs: dict[str, str] = {}
        marked: list[Node] = []
        self.revalidated = []
        head = ""
        for node_id, anchor in self.anchors.items():
            node = graph.nodes.get(node_id)
            if node is None or not node.current:
                continue
            path = anchor.location.partition("::")[0]
            if path not in blobs:
                blobs[path] = self._blob(path)
            if blobs[path] == anchor.blob and not node.stale:
                continue
            code = self._code(anchor.location)
            if code is not None and _code_hash(code) == anchor.code:
                anchor.blob = blobs[path]  # re-validated: the symbol is unchanged
                if node.stale:
                    node.stale = ""
                    self.revalidated.append(node)
                continue
            if node.stale:
                continue
            head = head or _git.head(self.root)
            node.stale = self._reason(anchor, path, code, head)
            marked.append(node)
        return marked

    def _reason(self, anchor: Anchor, path: str, code: str | None, head: str) -> str:
        """Why ``anchor``'s symbol is no longer what it was (``code``: its code now)."""
        committed = self._code(anchor.location, head) if head else None
        where = self._changed_in(anchor, path, head) if committed is None or \
            _code_hash(committed) != anchor.code else "the working tree"
        return f"{anchor.location} changed in {where}" if code is not None \
            else f"{anchor.location} removed in {where}"

    def verdict(self, anchor: Anchor) -> tuple[str, str]:
        """Whether ``anchor``'s symbol is as it was, read now, changing nothing:
        ("fresh", ""), ("changed", why) or ("gone", why). The file's blob is hashed here
        (as git hashes a file without filters) so that an unchanged file costs no git
        call; a file whose bytes changed is chunked and its symbol compared."""
        path = anchor.location.partition("::")[0]
        try:
            data = (self.root / path).read_bytes()
        except OSError:
            data = None
        if data is not None and _blob_of(data) == anchor.blob:
            return "fresh", ""
        code = self._code(anchor.location) if data is not None else None
        if code is not None and _code_hash(code) == anchor.code:
            return "fresh", ""
        why = self._reason(anchor, path, code, _git.head(self.root))
        return ("changed" if code is not None else "gone"), why

    def _changed_in(self, anchor: Anchor, path: str, head: str) -> str:
        """Where ``path`` changed since ``anchor``: the last commit since then that touched
        it (noting an edit engram committed), else the working tree."""
        if not head or head == anchor.head:
            return "the working tree"
        since = f"{anchor.head}..{head}" if anchor.head else head
        from memory.acting.edits import is_engram_commit
        from memory.acting.edits.gitstate import GitFailed
        from memory.acting.edits.gitstate import text as git_text

        try:
            out = git_text(self.root, "log", "-1", "--format=%H%x00%B", since, "--", path)
        except GitFailed:
            return head[:8]
        sha, _, body = out.partition("\0")
        if not sha.strip():
            return "the working tree"  # commits since, none of them to this file
        return sha.strip()[:8] + (" by engram's edit" if is_engram_commit(body) else "")
