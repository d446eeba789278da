"""Static analysis for the outline builder (tree-sitter): targets, the repository's real
files, functions and imports, and what one target uses."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.backends.codemem.syntax import calls
from memory.index.chunks import _docstring, _parser
from replay.locoeval.prepare import is_test_file


class BuildError(ValueError):
    """A target that cannot be analysed, or outlines that cannot be built."""


@dataclass(frozen=True)
class Target:
    path: str
    qualname: str
    tests: tuple[str, ...]

    @property
    def namespace(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".") + "." + self.qualname

    @property
    def location(self) -> str:
        return f"{self.path}::{self.qualname}"


@dataclass(frozen=True)
class Function:
    """A real function or method of the repository."""

    path: str
    qualname: str
    signature: str
    doc: str  # on one line
    raw_doc: str = ""  # as written, lines kept

    @property
    def location(self) -> str:
        return f"{self.path}::{self.qualname}"

    @property
    def name(self) -> str:
        return self.qualname.split(".")[-1]


@dataclass
class RepoFacts:
    """What the builder knows of the repository as a whole."""

    definitions: dict[str, str] = field(default_factory=dict)  # top-level name -> path
    functions: list[Function] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> module docstring
    externals: list[tuple[str, str]] = field(default_factory=list)  # (name, module)
    said: dict[str, list[str]] = field(default_factory=dict)  # location -> plain sentences


@dataclass
class Analysis:
    signature: str
    params: list[str]
    doc: str  # on one line
    internal: list[tuple[str, str]]  # (name, path) defined in the repository
    external: list[tuple[str, str]]  # (name, module) imported from outside
    raw_doc: str = ""  # as written, lines kept (``replay.locoeval._prose`` reads it)


def load_targets(path: Path) -> list[Target]:
    """``[{"location": "path::Qual.name", "tests": ["tests/x.py::test_y"]}, ...]``"""
    data = json.loads(Path(path).read_text("utf-8"))
    targets = []
    for i, row in enumerate(data):
        location = str(row.get("location", ""))
        file, sep, qual = location.partition("::")
        if not sep or not qual:
            raise BuildError(f"{path}[{i}]: location must be path::Qual.name, got {location!r}")
        tests = tuple(str(t) for t in row.get("tests") or [])
        if not tests:
            raise BuildError(f"{path}[{i}]: {location} has no tests")
        targets.append(Target(file, qual, tests))
    return targets


def _defs(node: Any) -> list[tuple[Any, Any]]:
    """(definition, outer node) of the function/class definitions directly in ``node``."""
    out = []
    for child in node.named_children if node is not None else []:
        target = child.child_by_field_name("definition") \
            if child.type == "decorated_definition" else child
        if target is not None and target.type in ("function_definition", "class_definition"):
            out.append((target, child))
    return out


def _name(node: Any) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode() if name is not None else ""


def _signature(source: bytes, node: Any) -> str:
    body = node.child_by_field_name("body")
    return " ".join(source[node.start_byte:body.start_byte].decode().split()).rstrip(":")


def source_files(repo: Path) -> list[tuple[str, Path]]:
    """The repository's Python files that are not tests, hidden or vendored."""
    out = []
    for file in sorted(repo.rglob("*.py")):
        rel = file.relative_to(repo).as_posix()
        if is_test_file(rel) or rel.startswith(".") or "/." in rel or "venv" in rel.split("/"):
            continue
        out.append((rel, file))
    return out


def repo_facts(repo: Path) -> RepoFacts:
    facts = RepoFacts()
    files = source_files(repo)
    modules = {rel.split("/")[0].removesuffix(".py") for rel, _ in files}
    for rel, file in files:
        source = file.read_bytes()
        root = _parser().parse(source).root_node
        facts.files[rel] = " ".join(_docstring(source, root).split())
        for node, _ in _defs(root):
            name = _name(node)
            facts.definitions.setdefault(name, rel)
            inner = [(node, name)] if node.type == "function_definition" else [
                (m, f"{name}.{_name(m)}") for m, _ in _defs(node.child_by_field_name("body"))
                if m.type == "function_definition"]
            for fn, qual in inner:
                raw = _docstring(source, fn.child_by_field_name("body"))
                facts.functions.append(Function(rel, qual, _signature(source, fn),
                                                " ".join(raw.split()), raw))
        for item in imports(source, modules).items():
            if (item[0], item[1]) not in facts.externals:
                facts.externals.append((item[0], item[1]))
    facts.externals.sort()
    return facts


def imports(source: bytes, repo_modules: set[str]) -> dict[str, str]:
    """Names the module imports from outside the repository -> module."""
    out: dict[str, str] = {}
    for node in _parser().parse(source).root_node.named_children:
        text = node.text.decode()
        if node.type == "import_statement":
            for module in re.findall(r"([\w.]+)(?:\s+as\s+\w+)?", text.removeprefix("import")):
                if module.split(".")[0] not in repo_modules:
                    out[module.split(".")[0]] = module
        elif node.type == "import_from_statement":
            match = re.match(r"from\s+([\w.]+)\s+import\s+\(?([^)]*)\)?", text, re.S)
            if match and not match.group(1).startswith(".") \
                    and match.group(1).split(".")[0] not in repo_modules:  # relative: its own
                for name in re.findall(r"(\w+)(?:\s+as\s+(\w+))?", match.group(2)):
                    out[name[1] or name[0]] = match.group(1)
    return out


def find_node(source: bytes, qualname: str) -> Any:
    node: Any = _parser().parse(source).root_node
    for depth, name in enumerate(qualname.split(".")):
        scope = node if depth == 0 else node.child_by_field_name("body")
        found = [d for d, _ in _defs(scope) if _name(d) == name]
        if not found:
            raise BuildError(f"no definition {qualname!r}")
        node = found[-1]
    return node


def analyse(repo: Path, target: Target, facts: RepoFacts) -> Analysis:
    file = repo / target.path
    if not file.is_file():
        raise BuildError(f"{target.path} not found in {repo}")
    source = file.read_bytes()
    node = find_node(source, target.qualname)
    if node.type != "function_definition":
        raise BuildError(f"{target.location} is not a function")
    body = node.child_by_field_name("body")
    params_node = node.child_by_field_name("parameters")
    params = [p.text.decode() for p in params_node.named_children] if params_node else []
    code = node.text.decode()
    doc_raw = body.named_children[0].text.decode() if _docstring(source, body) else ""
    used = set(re.findall(r"\b\w+\b", code.replace(doc_raw, "", 1) if doc_raw else code))
    name = target.qualname.split(".")[-1]
    internal = [(n, facts.definitions[n]) for n in sorted(calls(code))
                if n in facts.definitions and n != name]
    modules = {p.split("/")[0].removesuffix(".py") for p in facts.definitions.values()}
    external = [(n, m) for n, m in sorted(imports(source, modules).items()) if n in used]
    raw = _docstring(source, body)
    return Analysis(_signature(source, node), params, " ".join(raw.split()), internal, external,
                    raw)
