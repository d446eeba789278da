"""Where a function lives, which names its module already knows, and what another
function documents: what the repository tells the ``cards`` revision rules.

Two dependency statements about one function in the same frame ("`f` should reuse
`g` from `a.py`", then "... `h` from `b.py`") may both hold: a function uses several
things. Names alone rarely tell a replaced dependency from an added one (a function
replaced by an exception class has no similar name). The repository does: a module
imports, or defines, what its functions use. So a dependency the function's module
neither defines nor imports (nor imports the module of) is *foreign*, and a later
dependency statement of the same frame replaces it; a known one is kept. When the
function's module is unknown, nothing is foreign.

The rule holds for a function the repository does not have yet (one to write): its
module is the file the latest current statement about it places it in (a code span
naming a file of the repository, in a statement that is not itself about a
dependency). For a function the repository has, a dependency named for it is one its
code does not use yet, so the module's names say nothing: every such dependency adds.
Two names some function of the repository uses together are not alternatives for one
another either (``RepoReader.used_together``): neither is a close replacement of the other.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from memory.backends.cards.rules import (
    ANY_SPAN,
    DEF_LINE,
    NAME_SPAN,
    NOT_ALNUM,
    PLAIN_WORD,
    PY_FILE,
    RST_EMPHASIS,
    RST_LITERAL,
    RST_ROLE,
    SENTENCE_BREAK,
)
from memory.index.repo import LocationRefused, RepoIndex


def module_names(source: str) -> frozenset[str]:
    """The names a module knows: what it defines at its top level (functions, classes,
    assigned names) and what it imports anywhere (``import a.b``: "a", "a.b", "b";
    ``from m import x``: "x" only, not the rest of ``m``); empty when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
                names.update(_dotted(alias.name))
        elif isinstance(node, ast.ImportFrom):  # only what it binds: not the module's rest
            names.update(alias.asname or alias.name for alias in node.names)
    return frozenset(names)


def imported_modules(source: str) -> frozenset[str]:
    """The modules a source file imports, by their full names (``import a.b``, ``from a.b
    import c``: "a.b"); empty when it does not parse. Relative imports left out."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return frozenset(found)


def imported_names(source: str) -> frozenset[str]:
    """The names a source file imports by name, each with its module (``from a.b import
    c as d``: "a.b.c"); empty when it does not parse. Relative imports left out."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    return frozenset(f"{node.module}.{alias.name}" for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module and not node.level
                     for alias in node.names)


def _dotted(module: str) -> set[str]:
    """``a.b.c`` -> {"a.b.c", "b.c", "c"}: a module's name as a statement may give it."""
    parts = module.split(".")
    return {".".join(parts[n:]) for n in range(len(parts))}


def module_of(path: str) -> set[str]:
    """The names a file path may be imported by (``pkg/sub/mod.py`` -> {"pkg.sub.mod",
    "sub.mod", "mod"}; a package's ``__init__.py`` by the package)."""
    pure = PurePosixPath(path)
    parts = [*pure.parent.parts, pure.stem]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return _dotted(".".join(parts)) if parts else set()


def known(name: str, module: str, names: frozenset[str]) -> bool:
    """Whether a module that knows ``names`` knows the dependency ``name`` (from
    ``module``: a module name or a file path, "" when none was said): it binds the name,
    or imports its module whole."""
    bare = name.strip("()").split(".")[-1]
    if bare in names or name.strip("()") in names:
        return True
    if not module:
        return False
    wanted = module_of(module) if PY_FILE.match(module) else _dotted(module.strip("."))
    return bool(wanted & names)


def _module_key(module: str) -> str:
    """A module as said, dotted: ``app/money.py`` and ``app.money`` both ``app.money``."""
    module = module.strip().strip("`").lower()
    if PY_FILE.match(module):
        parts = [*PurePosixPath(module.removeprefix("./")).parent.parts,
                 PurePosixPath(module).stem]
        return ".".join(p for p in parts if p != "__init__")
    return module.strip(".")


def same_module(a: str, b: str) -> bool:
    """Whether two modules as said (a file path or a dotted name, "" when none was said)
    are one: equal once dotted, or, where one is a file of the repository, the dotted
    name its last parts (``app/money.py`` and ``money``; ``src/pkg/m.py`` and ``pkg.m``).
    Two dotted names must be equal: ``abc`` is not ``collections.abc``."""
    x, y = _module_key(a), _module_key(b)
    if not x or not y:
        return False
    if x == y:
        return True
    is_file = (bool(PY_FILE.match(a.strip().strip("`"))), bool(PY_FILE.match(b.strip().strip("`"))))
    if is_file[0] == is_file[1]:
        return False  # two files, or two dotted names: equal or not the same
    path, name = (x, y) if is_file[0] else (y, x)
    return path.endswith("." + name)


def home(statements: Iterable[str], is_file: Callable[[str], bool]) -> str:
    """The file a function to write goes in: the file named by the latest of
    ``statements`` (oldest first) that names one (``is_file``: whether a path is a file
    of the repository); "" when none does."""
    for text in reversed(list(statements)):
        for span in NAME_SPAN.findall(text):
            if PY_FILE.match(span) and is_file(span):
                return span
    return ""


def _unmarked(text: str) -> str:
    """Docstring prose as a developer would say it: RST roles, literals and emphasis as
    plain text and code spans."""
    return RST_EMPHASIS.sub(r"\1", RST_LITERAL.sub(r"`\1`", RST_ROLE.sub(r"`\1`", text)))


def documented(code: str) -> list[str]:
    """What a function's or class's docstring says: its first paragraph, then each
    sentence of its prose (doctest and indented example lines left out), each once, its
    RST markup as plain text."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return []
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    doc = _unmarked(ast.get_docstring(node) or "")
    prose = []
    for paragraph in doc.split("\n\n"):
        lines = []
        for line in paragraph.splitlines():
            if line.lstrip().startswith(">>>"):
                break  # a doctest, its output with it, runs to the paragraph's end
            if line.strip() and not line.startswith((" ", "\t")):
                lines.append(line.strip())
        if lines:
            prose.append(" ".join(lines))
    said = [doc.split("\n\n", 1)[0].strip(),
            *(s.strip() for p in prose for s in SENTENCE_BREAK.split(p))]
    return list(dict.fromkeys(s for s in said if s))


def parsed(code: str) -> ast.Module | None:
    """The syntax tree of a function's code as the index keeps it: from its first line
    (a decorator, or ``def``) in column 0, the rest as indented in its file; None when it
    does not parse."""
    found = DEF_LINE.search(code)
    try:
        return ast.parse(textwrap.dedent((found.group(1) if found else "") + code))
    except (SyntaxError, ValueError):
        return None


class RepoReader:
    """The repository's Python files (read once each while the index stays as it is) and
    its function search."""

    def __init__(self, repo: RepoIndex | None) -> None:
        self.repo = repo
        self._sources: dict[str, str] = {}
        self._used: dict[str, set[str]] | None = None  # name -> functions using it
        self._read_at = self.generation

    @property
    def generation(self) -> int:
        """The index's refresh count (``RepoIndex.generation``): what was read of the files
        before it changed is dropped."""
        return getattr(self.repo, "generation", 0)

    def _current(self) -> None:
        if self._read_at != self.generation:
            self._sources, self._used, self._read_at = {}, None, self.generation

    def source(self, path: str) -> str:
        """The text of a Python file of the repository ("" when it has none)."""
        repo = self.repo
        if repo is None or not path.endswith((".py", ".pyi")) or "\x00" in path:
            return ""
        self._current()
        if path not in self._sources:
            try:
                self._sources[path] = (repo.root / repo.relative(path)).read_text(
                    "utf-8", "replace")
            except (LocationRefused, OSError, ValueError):
                self._sources[path] = ""
        return self._sources[path]

    def users(self, name: str) -> frozenset[str]:
        """Locations of the repository's functions and methods whose code uses ``name`` (its
        last part) as a plain name: not as another object's attribute, nor in a string, a
        comment or a docstring; a function's own name inside it (recursion) aside."""
        self._current()
        if self._used is None:
            self._used = {}
            for chunk in self.repo.chunks(("function", "method")) if self.repo else ():
                tree = parsed(chunk.code)
                if tree is None:
                    continue
                # inside a method, its own plain name is the module's function, not itself
                own = {chunk.qualname.rsplit(".", 1)[-1]} if chunk.kind == "function" else set()
                for used in {n.id for n in ast.walk(tree)
                             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - own:
                    self._used.setdefault(used, set()).add(chunk.location)
        return frozenset(self._used.get(name.rsplit(".", 1)[-1], ()))

    def used_together(self, a: str, b: str) -> bool:
        """Whether some function of the repository uses both names (False for two names
        of one last part, ``json.loads`` and ``pickle.loads``: no telling them apart)."""
        if a.rsplit(".", 1)[-1] == b.rsplit(".", 1)[-1]:
            return False
        return bool(self.users(a) & self.users(b))

    def functions(self, text: str, k: int) -> list[tuple[str, str]]:
        """(location, code) of the repository's ``k`` functions closest to ``text``."""
        if self.repo is None or k <= 0:
            return []
        return [(h.chunk.location, h.chunk.code) for h in self.repo.functions(text, k)]


def misses_its_name(claim: str, sentence: str, location: str, subject: str) -> bool:
    """Whether ``claim`` lacks a word by which ``sentence``, from the docstring of the
    function at ``location``, names that function: a plain word (outside code spans, three
    letters or more) inside the function's name and not inside ``subject``'s ("LRU" for
    ``lru_cache`` beside ``lfu_cache``, "typed" for ``typedkey`` beside ``hashkey``).
    Siblings share a docstring but for such words: a claim without them is not the
    other one's description."""
    def bare(name: str) -> str:
        return NOT_ALNUM.sub("", name.rsplit("::", 1)[-1].rsplit(".", 1)[-1].lower())

    def words(text: str) -> set[str]:  # plain words, lower case, code spans left out
        return {w.lower() for w in PLAIN_WORD.findall(ANY_SPAN.sub(" ", text))}

    own, theirs = bare(location), bare(subject)
    return any(w in own and w not in theirs for w in words(sentence) - words(claim))

