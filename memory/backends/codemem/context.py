"""CodeMem's Code Context Memory: repository blocks keyed by signature.

A block is a function (key: signature with docstring) or a class (key: signature,
attributes, method names); its value is the implementation. The ADD step pages
through BM25 hits five at a time; the AST selector keeps the blocks whose APIs
(names they define or call) meet the external APIs of the generated code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.backends.codemem.syntax import calls, definitions
from memory.index.chunks import _docstring, _parser, _signature

if TYPE_CHECKING:
    from memory.index.chunks import Chunk
    from memory.index.repo import RepoIndex

PAGE = 5  # BM25 hits per ADD step, as CodeMem retrieves
RETRIES = 5  # further pages tried when a page brings nothing new
BLOCK_KINDS = ("function", "method", "class")


@dataclass(frozen=True)
class CodeBlock:
    location: str  # path::Qual.name
    key: str
    code: str
    apis: frozenset[str]


def _definition(code: str) -> tuple[str, str] | None:
    """(signature, docstring) of the first definition in ``code``."""
    source = code.encode()
    for node in _parser().parse(source).root_node.named_children:
        target = node.child_by_field_name("definition") if node.type == "decorated_definition" \
            else node
        if target is not None and target.type in ("function_definition", "class_definition"):
            body = target.child_by_field_name("body")
            return _signature(source, target, body), _docstring(source, body)
    return None


def block_key(chunk: Chunk) -> str:
    """A function's signature with its docstring; a class's signature, attributes, methods."""
    found = _definition(chunk.code)
    sig, doc = found if found else (chunk.qualname, "")
    if chunk.kind == "class":
        extra = [line for line in chunk.key.splitlines()
                 if line.startswith(("attributes: ", "methods: "))]
        return "\n".join([f"# {chunk.location}", sig, *extra])
    lines = [f"# {chunk.location}", sig]
    if doc:
        lines.append(f'    """{doc}"""')
    return "\n".join(lines)


def block_apis(chunk: Chunk) -> frozenset[str]:
    """The names a block defines (itself, its methods) and the names it calls."""
    names = {chunk.name} | set(re.split(r"[./]", chunk.qualname))
    names |= definitions(chunk.code)
    if chunk.kind == "class":
        names |= {m for line in chunk.key.splitlines() if line.startswith("methods: ")
                  for m in line.removeprefix("methods: ").split(", ")}
    names |= calls(chunk.code)
    return frozenset(n for n in names if n)


def to_block(chunk: Chunk) -> CodeBlock:
    return CodeBlock(chunk.location, block_key(chunk), chunk.code, block_apis(chunk))


def keyword_query(*texts: str) -> str:
    """Words only: BM25 needs no punctuation, and the FTS parser rejects some."""
    words = [w for text in texts for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)]
    return " ".join(dict.fromkeys(words))


def retrieve_new(repo: RepoIndex, query: str, have: set[str]) -> list[CodeBlock]:
    """The next BM25 page that brings blocks not in ``have``: five hits at a time,
    trying up to ``RETRIES`` further pages."""
    text = keyword_query(query)
    if not text:
        return []
    hits = repo.keyword(text, PAGE * (RETRIES + 1), BLOCK_KINDS)
    for start in range(0, len(hits), PAGE):
        fresh = [c for c in hits[start:start + PAGE] if c.location not in have]
        if fresh:
            return [to_block(c) for c in fresh]
    return []


def select(blocks: list[CodeBlock], external: set[str]) -> list[CodeBlock]:
    """CodeMem's AST selector: the blocks whose APIs meet the generated code's external calls."""
    return [b for b in blocks if b.apis & external]
