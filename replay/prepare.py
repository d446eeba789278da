"""Repository preparation for outline replays, and putting generated functions back.

``stubbed_copy`` makes a temp git repository from the user's, with each target
function's body (after its docstring) replaced by ``raise NotImplementedError``, so
the answer is not in the repo the agent indexes. ``insert_function`` replaces a
function in a file by generated code, re-indented to where the function lives.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.backends._codeast import code_blocks
from memory.chunks import _docstring, _parser
from replay.sandbox import IGNORED

STUB = "raise NotImplementedError  # engram replay: target function"


class PrepareError(ValueError):
    """A target that cannot be found or replaced."""


@dataclass(frozen=True)
class Span:
    start: int  # first line of the definition (decorators included), 0-based
    end: int  # last line, 0-based inclusive
    body: int  # first body line after the docstring, 0-based
    indent: str  # indentation of the ``def`` line


def find_function(source: str, qualname: str) -> Span:
    """The lines of ``Class.method`` / ``func`` in ``source``."""
    data = source.encode()
    parts = qualname.split(".")
    node: Any = _parser().parse(data).root_node
    outer = node
    for depth, name in enumerate(parts):
        container = node if depth == 0 else node.child_by_field_name("body")
        found = None
        for child in (container.named_children if container is not None else []):
            target = child.child_by_field_name("definition") \
                if child.type == "decorated_definition" else child
            if target is None or target.type not in ("function_definition", "class_definition"):
                continue
            name_node = target.child_by_field_name("name")
            if name_node is not None and name_node.text.decode() == name:
                found, outer = target, child
                break
        if found is None:
            raise PrepareError(f"no definition {qualname!r}")
        node = found
    body = node.child_by_field_name("body")
    if body is None or node.type != "function_definition":
        raise PrepareError(f"{qualname!r} is not a function")
    statements = list(body.named_children)
    first = statements[1] if len(statements) > 1 and _docstring(data, body) else \
        (None if _docstring(data, body) else statements[0] if statements else None)
    body_line = first.start_point[0] if first is not None else body.end_point[0] + 1
    line = source.splitlines()[outer.start_point[0]]
    return Span(outer.start_point[0], outer.end_point[0], body_line,
                line[:len(line) - len(line.lstrip())])


def stub_function(source: str, qualname: str) -> str:
    span = find_function(source, qualname)
    lines = source.splitlines()
    def_line = lines[span.start:span.end + 1]
    keep = lines[:span.body] if span.body <= span.end else lines[:span.end + 1]
    body_indent = span.indent + "    "
    for line in def_line[1:]:
        if line.strip():
            body_indent = line[:len(line) - len(line.lstrip())]
            break
    return "\n".join([*keep, body_indent + STUB, *lines[span.end + 1:]]) + "\n"


def _git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "engram", "GIT_AUTHOR_EMAIL": "replay@engram.invalid",
           "GIT_COMMITTER_NAME": "engram", "GIT_COMMITTER_EMAIL": "replay@engram.invalid",
           "PATH": "/usr/bin:/bin", "HOME": str(root)}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def stubbed_copy(repo: Path, targets: list[tuple[str, str]], dest: Path) -> Path:
    """A git repo at ``dest``: ``repo``'s files with each (path, qualname) stubbed."""
    shutil.copytree(repo, dest, ignore=IGNORED, symlinks=False)
    for path, qualname in targets:
        file = (dest / path).resolve()
        if not file.is_relative_to(dest.resolve()) or not file.is_file():
            raise PrepareError(f"target file {path!r} not found in {repo}")
        file.write_text(stub_function(file.read_text("utf-8"), qualname))
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "replay: targets stubbed")
    return dest


def extract_function(answer: str, name: str) -> str | None:
    """The definition of ``name`` in an answer's code (with what precedes it in the block,
    e.g. imports, left out)."""
    for block in code_blocks(answer):
        try:
            span = find_function(block, name)
        except PrepareError:
            continue
        lines = block.splitlines()
        return textwrap.dedent("\n".join(lines[span.start:span.end + 1]))
    return None


def insert_function(source: str, qualname: str, code: str) -> str:
    """``source`` with ``qualname`` replaced by ``code`` (re-indented to fit)."""
    span = find_function(source, qualname)
    lines = source.splitlines()
    new = textwrap.indent(textwrap.dedent(code).strip("\n"), span.indent).splitlines()
    return "\n".join([*lines[:span.start], *new, *lines[span.end + 1:]]) + "\n"
