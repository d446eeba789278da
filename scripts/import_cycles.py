"""Import circles in a package: strongly connected components of its import graph.

Every ``import``/``from ... import`` anywhere in a module counts (module level, inside
functions, lazy ones), except those under ``if TYPE_CHECKING:`` (annotations only, never
executed) unless ``--type-checking`` is given. ``from pkg import name`` counts as an arrow
to ``pkg.name`` when that is a module, else to ``pkg``.

    python scripts/import_cycles.py replay [--type-checking]

Exit status 1 when there is a circle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        if any(not (d / "__init__.py").exists() for d in path.parents
               if d == root or root in d.parents):
            continue  # not a package's module (data: the demo repository)
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, name: str, is_pkg: bool, keep_tc: bool) -> list[str]:
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not keep_tc:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join([*pkg, base] if base else pkg)
            out.append(base)
            out.extend(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def graph(root: Path, keep_tc: bool) -> dict[str, set[str]]:
    mods = _modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text("utf-8"))
        for target in _imports(tree, name, path.name == "__init__.py", keep_tc):
            if target in mods and target != name:
                edges[name].add(target)
    return edges


def sccs(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return found


def main(argv: list[str]) -> int:
    keep_tc = "--type-checking" in argv
    roots = [a for a in argv if not a.startswith("--")] or ["replay"]
    bad = 0
    for root in roots:
        edges = graph(Path(root), keep_tc)
        arrows = sum(len(v) for v in edges.values())
        circles = sccs(edges)
        print(f"{root}: {len(edges)} modules, {arrows} import arrows, {len(circles)} circle(s)"
              + (" (TYPE_CHECKING imports counted)" if keep_tc else
                 " (TYPE_CHECKING imports ignored)"))
        for comp in circles:
            print("  circle: " + " <-> ".join(comp))
        bad += len(circles)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
