"""Source files to chunks: Python by tree-sitter, Markdown by heading. Pure functions.

A chunk is a unit of retrieval: a function, a method, a class (its skeleton), a
module (docstring and top-level statements) or a Markdown section. Its ``key``
is short (signature, docstring, head of body) so embedding stays fast; its
``code`` is what a model is shown.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

KEY_CHARS = 400
HEAD_LINES = 6
MODULE_CODE_LINES = 60

# Compound statements whose bodies may hold definitions we want (if TYPE_CHECKING, try, ...).
_CONTAINERS = {
    "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
    "finally_clause", "with_statement", "for_statement", "while_statement", "block",
    "ERROR", "module",
}


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a file; lines are 1-based and inclusive."""

    path: str
    qualname: str
    kind: str  # module | class | function | method | section
    start: int
    end: int
    key: str
    code: str

    @property
    def location(self) -> str:
        return f"{self.path}::{self.qualname}" if self.qualname else self.path

    @property
    def id(self) -> str:
        return f"{self.location}#{self.start}"

    @property
    def name(self) -> str:
        """The last component: ``validate`` for ``Form.validate``, the file name for a module."""
        if self.qualname:
            return re.split(r"[./]", self.qualname)[-1]
        return self.path.rsplit("/", 1)[-1]


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_python
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_python.language()))


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _docstring(source: bytes, body: Any | None) -> str:
    if body is None or not body.named_children:
        return ""
    first = body.named_children[0]
    if first.type != "expression_statement" or not first.named_children:
        return ""
    string = first.named_children[0]
    if string.type != "string":
        return ""
    raw = _text(source, string)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw.strip("\"'rRbBuUfF")
    return value.strip() if isinstance(value, str) else ""


def _signature(source: bytes, node: Any, body: Any | None) -> str:
    end = body.start_byte if body is not None else node.end_byte
    sig = source[node.start_byte:end].decode("utf-8", "replace").rstrip()
    return " ".join(sig.split())  # one line, even for long parameter lists


def _body_head(source: bytes, body: Any | None, skip_docstring: bool) -> str:
    if body is None:
        return ""
    statements = list(body.named_children)
    if skip_docstring and statements and _docstring(source, body):
        statements = statements[1:]
    if not statements:
        return ""
    text = source[statements[0].start_byte:body.end_byte].decode("utf-8", "replace")
    return "\n".join(text.splitlines()[:HEAD_LINES])


def _key(location: str, *parts: str) -> str:
    text = "\n".join(p for p in (location, *parts) if p)
    return text[:KEY_CHARS]


def _class_parts(source: bytes, body: Any | None) -> tuple[list[str], list[str], list[str]]:
    """Attribute names, method names and the skeleton lines of a class body."""
    attrs: list[str] = []
    methods: list[str] = []
    skeleton: list[str] = []
    if body is None:
        return attrs, methods, skeleton
    statements = list(body.named_children)
    if statements and _docstring(source, body):
        statements = statements[1:]
    for child in statements:
        target = child.child_by_field_name("definition") if child.type == "decorated_definition" \
            else child
        if target is None:
            continue
        if target.type == "function_definition":
            name_node = target.child_by_field_name("name")
            name = _text(source, name_node) if name_node else "?"
            methods.append(name)
            skeleton.append("    " + _signature(source, target, target.child_by_field_name("body"))
                            + " ...")
            if name == "__init__":
                attrs += re.findall(r"self\.(\w+)\s*(?::[^=\n]*)?=(?!=)",
                                    _text(source, target))
        elif target.type == "class_definition":
            skeleton.append("    " + _signature(source, target, target.child_by_field_name("body"))
                            + " ...")
        elif child.type == "expression_statement":
            line = _text(source, child)
            match = re.match(r"\s*(\w+)\s*[:=]", line)
            if match:
                attrs.append(match.group(1))
            skeleton.append("    " + line.splitlines()[0])
    return list(dict.fromkeys(attrs)), methods, skeleton


def python_chunks(path: str, source: bytes) -> list[Chunk]:
    """Chunks of a Python file; a file with syntax errors yields what tree-sitter recovers."""
    tree = _parser().parse(source)
    root = tree.root_node
    chunks: list[Chunk] = []

    def emit_def(node: Any, outer: Any, scope: list[str], in_class: bool) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None:
            return
        qualname = ".".join([*scope, _text(source, name_node)])
        location = f"{path}::{qualname}"
        sig = _signature(source, node, body)
        doc = _docstring(source, body)
        start, end = outer.start_point[0] + 1, outer.end_point[0] + 1
        if node.type == "class_definition":
            attrs, methods, skeleton = _class_parts(source, body)
            header = _text(source, outer)[: node.start_byte - outer.start_byte] + sig
            doc_block = f'    """{doc}"""' if doc else ""
            code = "\n".join(p for p in (header, doc_block, *skeleton) if p)
            key = _key(location, sig, doc[:300],
                       "attributes: " + ", ".join(attrs) if attrs else "",
                       "methods: " + ", ".join(methods) if methods else "")
            chunks.append(Chunk(path, qualname, "class", start, end, key, code))
            walk(body, [*scope, _text(source, name_node)], True)
        else:
            kind = "method" if in_class else "function"
            key = _key(location, sig, doc[:300], _body_head(source, body, True))
            chunks.append(Chunk(path, qualname, kind, start, end, key, _text(source, outer)))

    def walk(node: Any | None, scope: list[str], in_class: bool) -> None:
        if node is None:
            return
        for child in node.named_children:
            target = child
            if child.type == "decorated_definition":
                target = child.child_by_field_name("definition") or child
            if target.type in ("function_definition", "class_definition"):
                emit_def(target, child, scope, in_class)
            elif child.type in _CONTAINERS:
                walk(child, scope, in_class)

    walk(root, [], False)
    chunks.insert(0, _module_chunk(path, source, root))
    return chunks


def _module_chunk(path: str, source: bytes, root: Any) -> Chunk:
    doc = _docstring(source, root)
    top: list[str] = []
    names: list[str] = []
    for child in root.named_children:
        target = child.child_by_field_name("definition") if child.type == "decorated_definition" \
            else child
        if target is not None and target.type in ("function_definition", "class_definition"):
            name_node = target.child_by_field_name("name")
            if name_node is not None:
                names.append(_text(source, name_node))
        elif child.type != "comment":
            top.extend(_text(source, child).splitlines())
    code = "\n".join(top[:MODULE_CODE_LINES])
    key = _key(path, doc[:300], "defines: " + ", ".join(names) if names else "")
    lines = source.count(b"\n") + (0 if source.endswith(b"\n") else 1)
    return Chunk(path, "", "module", 1, max(lines, 1), key, code)


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_chunks(path: str, text: str) -> list[Chunk]:
    """One chunk per heading section (fenced code blocks are not headings)."""
    lines = text.splitlines()
    sections: list[tuple[list[str], int]] = []  # (heading path, start line index)
    trail: list[tuple[int, str]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match:
            level, title = len(match.group(1)), match.group(2)
            trail = [t for t in trail if t[0] < level] + [(level, title)]
            sections.append(([t[1] for t in trail], i))
    chunks: list[Chunk] = []
    first = sections[0][1] if sections else len(lines)
    if any(line.strip() for line in lines[:first]):
        body = "\n".join(lines[:first])
        chunks.append(Chunk(path, "", "module", 1, max(first, 1), _key(path, body), body))
    for n, (heading, start) in enumerate(sections):
        end = sections[n + 1][1] if n + 1 < len(sections) else len(lines)
        body = "\n".join(lines[start:end]).rstrip()
        qualname = "/".join(heading)
        chunks.append(Chunk(path, qualname, "section", start + 1, max(end, start + 1),
                            _key(f"{path}::{qualname}", body), body))
    return chunks


PYTHON_SUFFIXES = (".py", ".pyi")
MARKDOWN_SUFFIXES = (".md", ".markdown")


def chunk_file(path: str, data: bytes) -> list[Chunk]:
    """Chunks of a supported file (by suffix); others yield none."""
    lower = path.lower()
    if lower.endswith(PYTHON_SUFFIXES):
        return python_chunks(path, data)
    if lower.endswith(MARKDOWN_SUFFIXES):
        return markdown_chunks(path, data.decode("utf-8", "replace"))
    return []


def supported(path: str) -> bool:
    return path.lower().endswith(PYTHON_SUFFIXES + MARKDOWN_SUFFIXES)
