"""Repository preparation for outline replays, and putting generated functions back.

``prepared_copy`` makes a temp git repository from the user's in which the target
functions do not exist (their whole definitions deleted: decorators, signature,
docstring, body) and neither do the tests that exercise them (the tests named for
the target, and any test function that refers to it; a test file left without tests
is deleted). Callers of a removed function stay as they are. The original repository
is used only for grading: ``insert_function`` puts generated code back into a copy of
it, re-indented to where the function lives.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.backends.codemem.syntax import PYTHON_INFOS, code_blocks
from memory.fences import spans
from memory.index.chunks import _docstring, _parser
from replay.sandbox.sandbox import IGNORED


class PrepareError(ValueError):
    """A target that cannot be found or replaced."""


@dataclass(frozen=True)
class Span:
    start: int  # first line of the definition (decorators included), 0-based
    end: int  # last line, 0-based inclusive
    body: int  # first body line after the docstring, 0-based
    indent: str  # indentation of the ``def`` line
    alone: bool = False  # the only statement of its class body


def _definition(node: Any) -> Any:
    return node.child_by_field_name("definition") if node.type == "decorated_definition" \
        else node


def find_function(source: str, qualname: str) -> Span:
    """The lines of ``Class.method`` / ``func`` in ``source``."""
    data = source.encode()
    parts = qualname.split(".")
    node: Any = _parser().parse(data).root_node
    outer = node
    alone = False
    for depth, name in enumerate(parts):
        container = node if depth == 0 else node.child_by_field_name("body")
        found = None
        alone = depth > 0 and container is not None and len(
            [c for c in container.named_children if c.type != "comment"]) == 1
        for child in (container.named_children if container is not None else []):
            target = _definition(child)
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
                line[:len(line) - len(line.lstrip())], alone)


def remove_function(source: str, qualname: str) -> str:
    """``source`` without the definition of ``qualname`` (a class left empty gets ``pass``;
    the blank lines around the gap are collapsed)."""
    span = find_function(source, qualname)
    lines = source.splitlines()
    before, after = lines[:span.start], lines[span.end + 1:]
    while before and not before[-1].strip() and after and not after[0].strip():
        after = after[1:]
    kept = [*before, span.indent + "pass", *after] if span.alone else [*before, *after]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n"


def is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")
                                     or ("/tests/" in f"/{rel}" and name != "conftest.py"
                                         and name != "__init__.py"))


def find_tests(source: str) -> list[tuple[str, str]]:
    """(qualname, code) of the test functions of a module, as pytest collects them:
    ``test*`` functions and the ``test*`` methods of ``Test*`` classes and of
    ``unittest.TestCase`` subclasses, whatever their name (``ChunkedTests(TestCase)``)."""
    data = source.encode()
    out = []
    for child in _parser().parse(data).root_node.named_children:
        node = _definition(child)
        if node is None:
            continue
        name = node.child_by_field_name("name")
        label = name.text.decode() if name is not None else ""
        if node.type == "function_definition" and label.startswith("test"):
            out.append((label, child.text.decode()))
        elif node.type == "class_definition" and (label.startswith("Test") or _unittest(node)):
            body = node.child_by_field_name("body")
            for inner in body.named_children if body is not None else []:
                method = _definition(inner)
                mname = method.child_by_field_name("name") if method is not None else None
                if method is not None and method.type == "function_definition" and \
                        mname is not None and mname.text.decode().startswith("test"):
                    out.append((f"{label}.{mname.text.decode()}", inner.text.decode()))
    return out


def _unittest(node: Any) -> bool:
    """Whether a class derives from a ``TestCase`` (``TestCase``, ``unittest.TestCase``,
    ``IsolatedAsyncioTestCase``) by one of its written bases."""
    bases = node.child_by_field_name("superclasses")
    return bases is not None and any(
        b.text.decode().rsplit(".", 1)[-1].endswith("TestCase") for b in bases.named_children)


def _refers(code: str, qualname: str, file_text: str) -> bool:
    parts = qualname.split(".")
    if len(parts) == 1:
        return re.search(rf"\b{re.escape(parts[0])}\b", code) is not None
    return (re.search(rf"\.{re.escape(parts[-1])}\s*\(", code) is not None
            and re.search(rf"\b{re.escape(parts[-2])}\b", file_text) is not None)


def exercising_tests(root: Path, qualname: str, named: Iterable[str] = ()) -> dict[str, set[str]]:
    """Test file -> qualnames of its test functions that exercise ``qualname``: the node
    ids in ``named`` (``tests/x.py::test_y``, ``tests/x.py::TestC::test_y[1]``) and every
    test function that refers to the target by name."""
    found: dict[str, set[str]] = {}
    for node_id in named:
        file, _, rest = node_id.partition("::")
        if rest:
            found.setdefault(file, set()).add(re.sub(r"\[.*\]$", "", rest).replace("::", "."))
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if not is_test_file(rel) or "/." in f"/{rel}":
            continue
        text = file.read_text("utf-8", "replace")
        tests = find_tests(text)
        for name, code in tests:
            if _refers(code, qualname, text):
                found.setdefault(rel, set()).add(name)
        for named_class in [n for n in found.get(rel, ()) if "." not in n]:
            methods = {t for t, _ in tests if t.startswith(f"{named_class}.")}
            if methods:  # a node id naming a whole class: each of its tests
                found[rel] = (found[rel] - {named_class}) | methods
    return found


def remove_tests(root: Path, tests: dict[str, set[str]]) -> list[str]:
    """Delete the given test functions; a test file left without tests is deleted.
    Returns the node ids removed (``path::name``)."""
    removed = []
    for rel, names in sorted(tests.items()):
        file = (root / rel).resolve()
        if not file.is_relative_to(root.resolve()) or not file.is_file():
            continue
        source = file.read_text("utf-8", "replace")
        for name in sorted(names):
            try:
                source = remove_function(source, name)
            except PrepareError:
                continue
            removed.append(f"{rel}::{name.replace('.', '::')}")
        if find_tests(source):
            file.write_text(source)
        else:
            file.unlink()
    return removed


def _git(root: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "engram", "GIT_AUTHOR_EMAIL": "replay@engram.invalid",
           "GIT_COMMITTER_NAME": "engram", "GIT_COMMITTER_EMAIL": "replay@engram.invalid",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "PATH": "/usr/bin:/bin", "HOME": str(root)}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


PrepTarget = tuple[str, str] | tuple[str, str, Sequence[str]]


def prepare_tree(root: Path, targets: Sequence[PrepTarget]) -> list[str]:
    """Delete, in place under ``root``, each target ``(path, qualname[, test node ids])``,
    its declarations in a ``.pyi`` stub beside it, and the tests that exercise it. Returns
    what was removed (locations and node ids)."""
    removed: list[str] = []
    for target in targets:
        path, qualname = target[0], target[1]
        file = (root / path).resolve()
        if not file.is_relative_to(root.resolve()) or not file.is_file():
            raise PrepareError(f"target file {path!r} not found in {root}")
        file.write_text(remove_function(file.read_text("utf-8"), qualname))
        removed.append(f"{path}::{qualname}")
        stub = file.with_suffix(".pyi")  # a type stub beside it would still give the signature
        if file.suffix == ".py" and stub.is_file():
            source, cut = stub.read_text("utf-8"), 0
            while True:  # every overload
                try:
                    source, cut = remove_function(source, qualname), cut + 1
                except PrepareError:
                    break
            if cut:
                stub.write_text(source)
                removed.append(f"{Path(path).with_suffix('.pyi').as_posix()}::{qualname}")
    for target in targets:
        named = target[2] if len(target) > 2 else ()  # type: ignore[misc]
        removed += remove_tests(root, exercising_tests(root, target[1], named))
    return removed


def prepared_copy(repo: Path, targets: Sequence[PrepTarget], dest: Path) -> Path:
    """A git repo at ``dest``: ``repo``'s files without the targets and their tests."""
    shutil.copytree(repo, dest, ignore=IGNORED, symlinks=False)
    prepare_tree(dest, targets)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "replay: targets and their tests removed")
    return dest


_CLASS = re.compile(r"^class\s+(\w+)", re.M)


def _definition_in(block: str, qualname: str, whole: bool) -> str | None:
    """The definition of ``qualname`` in one block of code, dedented: written as
    ``Class.method`` inside its class, as a bare top-level function, or as a method of
    whatever top-level class the block wrote it in. ``whole``: only when the block parses
    as Python and so does the definition."""
    if whole:
        try:
            ast.parse(textwrap.dedent(block))
        except (SyntaxError, ValueError):
            return None
    parts = qualname.split(".")
    tries = [".".join(parts[i:]) for i in range(len(parts))]
    tries += [f"{cls}.{parts[-1]}" for cls in _CLASS.findall(block)]
    for candidate in dict.fromkeys(tries):
        try:
            span = find_function(block, candidate)
        except PrepareError:
            continue
        code = textwrap.dedent("\n".join(block.splitlines()[span.start:span.end + 1]))
        if not whole:
            return code
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        return code
    return None


def extract_function(answer: str, qualname: str) -> str | None:
    """The definition of ``qualname`` (``func`` or ``Class.method``) in an answer's code,
    dedented, with what precedes it in the block (imports) left out. The answer's Python
    blocks are read as CommonMark does (a docstring's own fenced examples, indented with
    the function or closed by a longer fence, stay in the block); failing that (an
    example written flush left closed the block early), the longest span from a Python
    block's opening fence to a later fence line that parses as Python and defines the
    function; failing that, the first block that holds a definition, parsed or not
    (its tests will tell)."""
    found = code_blocks(answer)
    for block in found:
        code = _definition_in(block, qualname, whole=True)
        if code is not None:
            return code
    for span in spans(answer, PYTHON_INFOS):
        code = _definition_in(span, qualname, whole=True)
        if code is not None:
            return code
    for block in found:
        code = _definition_in(block, qualname, whole=False)
        if code is not None:
            return code
    return None


def insert_function(source: str, qualname: str, code: str) -> str:
    """``source`` with ``qualname`` replaced by ``code`` (re-indented to fit)."""
    span = find_function(source, qualname)
    lines = source.splitlines()
    new = textwrap.indent(textwrap.dedent(code).strip("\n"), span.indent).splitlines()
    return "\n".join([*lines[:span.start], *new, *lines[span.end + 1:]]) + "\n"
