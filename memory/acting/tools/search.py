"""``search_code``: the repository index's hybrid search (memory/index/repo.py: vectors over
each definition's key, BM25 over its code, fused), the best definitions with their
location and first lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.acting.toolloop import Tool, ToolResult

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex

MAX_K = 8
SHOWN_LINES = 25
MAX_CHARS = 10_000

TOOL = Tool("search_code", "search the repository's functions, classes and modules by "
            f"meaning and words; k results (1 to {MAX_K}), best first.",
            {"query": {"type": "string", "minLength": 1},
             "k": {"type": "integer", "minimum": 1, "maximum": MAX_K}})


def search_code(index: RepoIndex, query: str, k: int = 5) -> ToolResult:
    if not query.strip():
        return ToolResult("The query is empty.", ok=False)
    k = max(1, min(MAX_K, int(k)))
    hits = index.search(query, k)
    if not hits:
        return ToolResult(f"Nothing in the index matches {query!r}.")
    blocks, used = [], 0
    for rank, hit in enumerate(hits, 1):
        chunk = hit.chunk
        lines = chunk.code.splitlines()
        more = f"\n    [... {len(lines) - SHOWN_LINES} more lines]" \
            if len(lines) > SHOWN_LINES else ""
        body = "\n".join(f"    {line}" for line in lines[:SHOWN_LINES])
        block = (f"{rank}. {chunk.location} ({chunk.kind}, lines {chunk.start}-{chunk.end})"
                 f"\n{body}{more}")
        if used + len(block) > MAX_CHARS and blocks:
            blocks.append(f"[{len(hits) - rank + 1} more results not shown]")
            break
        blocks.append(block)
        used += len(block)
    return ToolResult("\n".join(blocks))
