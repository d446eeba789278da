"""The layout's rules, checked on the source: no import circle inside a package. A module's
length is no rule (modules are split by purpose, never to fit a number): running this file
prints the largest ones, for information.

An import circle is a strongly connected component of more than one module (or a module
importing itself) in the graph of imports between a package's modules, read with ``ast``
(nothing is imported). Counted: every ``import``/``from ... import`` that can run, at the
top of the module or inside a function (a lazy import still ties the two modules
together). Not counted: imports under ``if TYPE_CHECKING:`` (they never run; none of the
checked packages needs one to break a circle). ``from pkg import name`` is an arrow to
``pkg.name`` when that is a module, else to ``pkg``; a package's ``__init__`` is not
counted as imported by its submodules.

    .venv/bin/python tests/test_layering.py     # prints each package's circles (none: ok)
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Packages that must have no import circle.
ACYCLIC = ["memory", "tui", "replay"]

# Packages whose largest modules are printed (information, not a gate).
SIZED = ["memory", "tui", "replay"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_statements(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` that can run: those in functions included,
    those under ``if TYPE_CHECKING:`` not."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _import_statements(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _import_statements(child)


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports at import time."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_statements(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        found.update(t for t in targets if t in known)
    return found


def graph(package: str) -> dict[str, set[str]]:
    mods = modules(package)
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with a cycle (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.append(sorted(component))
    return found


def test_the_checker_counts_lazy_imports_not_type_checking_ones(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("try:\n    from .c import x\nexcept ImportError:\n    pass\n")
    (pkg / "c.py").write_text("def later():\n    import pkg.a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from pkg import e\n")
    (pkg / "e.py").write_text("from pkg import d\n\ndef later():\n    from pkg import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    edges = graph("pkg")
    assert edges["pkg.a"] == {"pkg.b"} and edges["pkg.b"] == {"pkg.c"}
    assert edges["pkg.d"] == set() and edges["pkg.e"] == {"pkg.a", "pkg.d"}
    assert circles(edges) == [["pkg.a", "pkg.b", "pkg.c"]]


def outside_imports(package: str) -> set[tuple[str, str]]:
    """(module, top-level package) for every import in ``package`` of another of ours."""
    ours = {"memory", "tui", "replay"} - {package}
    found = set()
    for name, path in modules(package).items():
        for node in _import_statements(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                heads = [alias.name.partition(".")[0] for alias in node.names]
            else:
                heads = [] if node.level else [(node.module or "").partition(".")[0]]
            found.update((name, head) for head in heads if head in ours)
    return found


def test_front_ends_import_memory_only():
    """memory/ imports neither front-end; tui and replay import memory, never each other."""
    assert outside_imports("memory") == set()
    assert {head for _, head in outside_imports("tui")} <= {"memory"}
    assert {head for _, head in outside_imports("replay")} <= {"memory"}


def test_no_import_circles():
    found = {package: circles(graph(package)) for package in ACYCLIC}
    assert found == {package: [] for package in ACYCLIC}


def largest(count: int = 15) -> list[tuple[int, str]]:
    """The ``count`` longest modules of ``SIZED``, longest first: (lines, path)."""
    sizes = [(len(path.read_text(encoding="utf-8").splitlines()), str(path.relative_to(ROOT)))
             for package in SIZED for path in modules(package).values()]
    return sorted(sizes, reverse=True)[:count]


if __name__ == "__main__":
    for package in [*ACYCLIC, *(p for p in ("replay",) if p not in ACYCLIC)]:
        edges = graph(package)
        found = circles(edges)
        arrows = sum(len(v) for v in edges.values())
        print(f"{package}: {len(edges)} modules, {arrows} import arrows, "
              f"{len(found)} circle(s)")
        for component in found:
            print("   " + " <-> ".join(component))
    print("largest modules (information, not a rule):")
    for lines, path in largest():
        print(f"   {lines:5d}  {path}")
