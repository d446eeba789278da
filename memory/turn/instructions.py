"""Project instructions: the repository's own AGENTS.md, CLAUDE.md and ``.engram/rules/*.md``.

The developer writes them for every agent that works on the repository; engram puts
them into every context as pinned items of their own kind (``Section`` kind
``instructions``), outside any backend's budget, so that no backend and no fit of the
window ever compacts, masks, summarises or drops them (``memory/turn/agent.py``).

Which files apply to a set of paths (the files a turn's context cites, and the
repository root):

- ``AGENTS.md`` and ``CLAUDE.md`` of the folder of each path and of every folder above
  it up to the repository root (the AGENTS.md convention: the file nearest to the code
  concerned wins where two disagree);
- every ``.engram/rules/*.md`` of the repository root, by name.

``applying(paths)`` lists them nearest first: the deepest folder's files first, the
root's last, then the rules. Each file is read again when its size or modification time
changes on disk (``os.stat`` per file per call; the text is kept otherwise). A file that
resolves outside the repository (a symlink out) is refused; one larger than
``MAX_BYTES`` or not UTF-8 text is not read and said so (``problems``); nothing is ever
cut. Secrets in them are redacted (``memory/redact.py``) like everything that reaches a
model or a sink.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memory.redact import redact
from memory.types import Section

NAMES = ("AGENTS.md", "CLAUDE.md")  # per folder, in this order
RULES_DIR = ".engram/rules"
MAX_BYTES = 256 * 1024  # a larger file is not an instruction file a model can take
TITLE = "Project instructions"
PREAMBLE = ("The repository's own instruction files, nearest to the code concerned first: "
            "where two disagree, the nearer one wins. Follow them.")


@dataclass(frozen=True)
class Instruction:
    """One instruction file: its path relative to the root (posix), the folder it applies
    to ("" is the root), its kind (agents, claude, rule) and its text (redacted)."""

    file: str
    folder: str
    kind: str
    text: str
    path: Path

    @property
    def source(self) -> str:
        """The ``Section.source`` of its section: ``instructions:<file>``."""
        return f"instructions:{self.file}"

    def render(self) -> str:
        where = f"applies to {self.folder}/" if self.folder else "applies to the whole repository"
        return f"### {self.file} ({where})\n\n{self.text.strip()}"


@dataclass
class _Cached:
    stamp: tuple[int, int]
    text: str | None  # None: not readable (see problem)
    problem: str = ""


@dataclass
class Instructions:
    """The instruction files of one repository, read on demand and again when changed."""

    root: Path
    problems: dict[str, str] = field(default_factory=dict)  # file -> why it was not read
    _cache: dict[Path, _Cached] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()

    # -- which files ------------------------------------------------------------------------
    def folder_of(self, path: str | Path) -> str | None:
        """The folder (posix, relative to the root; "" the root) a cited path is in, or None
        when it is outside the repository. ``path::qualname`` and ``path:line`` sources are
        taken as their path; a path naming a folder is that folder."""
        text = str(path).split("::", 1)[0]
        candidate = Path(text)
        full = candidate if candidate.is_absolute() else self.root / candidate
        try:
            rel = PurePosixPath(Path(os.path.normpath(full)).relative_to(self.root).as_posix())
        except ValueError:
            return None
        if str(rel) == ".":
            return ""
        if full.is_dir():
            return str(rel)
        parent = str(rel.parent)
        return "" if parent == "." else parent

    def folders(self, paths: Iterable[str | Path]) -> list[str]:
        """The folders concerned, each with every folder above it, deepest first (the root
        is always one of them)."""
        seen: set[str] = {""}
        for path in paths:
            folder = self.folder_of(path)
            while folder:
                if folder in seen:
                    break
                seen.add(folder)
                folder = str(PurePosixPath(folder).parent)
                folder = "" if folder == "." else folder
        return sorted(seen, key=lambda f: (-(f.count("/") + 1 if f else 0), f))

    def applying(self, paths: Iterable[str | Path] = ()) -> list[Instruction]:
        """The instruction files that apply to ``paths`` (and to the root), nearest first;
        each read again if it changed on disk since the last call. ``problems`` is then
        the files among them that could not be read (none of an earlier call's others)."""
        self.problems.clear()
        found: list[Instruction] = []
        for folder in self.folders(paths):
            base = self.root / folder if folder else self.root
            for name, kind in zip(NAMES, ("agents", "claude"), strict=True):
                item = self._load(base / name, folder, kind)
                if item is not None:
                    found.append(item)
        rules = self.root / RULES_DIR
        if rules.is_dir():
            for path in sorted(rules.glob("*.md")):
                item = self._load(path, "", "rule")
                if item is not None:
                    found.append(item)
        return found

    # -- reading ------------------------------------------------------------------------------
    def _load(self, path: Path, folder: str, kind: str) -> Instruction | None:
        rel = (PurePosixPath(folder) / path.name).as_posix() if kind != "rule" \
            else f"{RULES_DIR}/{path.name}"
        try:
            stat = path.stat()
        except OSError:
            self._cache.pop(path, None)
            self.problems.pop(rel, None)
            return None
        if not path.is_file():
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is None or cached.stamp != stamp:
            cached = self._read(path, stamp)
            self._cache[path] = cached
        if cached.text is None:
            self.problems[rel] = cached.problem
            return None
        self.problems.pop(rel, None)
        return Instruction(rel, folder, kind, cached.text, path)

    def _read(self, path: Path, stamp: tuple[int, int]) -> _Cached:
        try:
            real = path.resolve()
            real.relative_to(self.root)
        except ValueError:
            return _Cached(stamp, None, "refused: it resolves outside the repository")
        if stamp[1] > MAX_BYTES:
            return _Cached(stamp, None, f"not read: {stamp[1]:,} bytes, over {MAX_BYTES:,}")
        try:
            text = real.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return _Cached(stamp, None, "not read: not UTF-8 text")
        except OSError as exc:
            return _Cached(stamp, None, f"not read: {exc.strerror or exc}")
        return _Cached(stamp, redact(text))


def render(found: list[Instruction]) -> str:
    """The instructions as one block of text (what a context or a resource shows)."""
    if not found:
        return ""
    return "\n\n".join([PREAMBLE, *(i.render() for i in found)])


# -- in a context ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Placed:
    """What the instructions took in one context: their files (nearest first), their
    tokens, the room the context had for everything but the system prompt, the examples,
    the query and the answer, and the files that could not be read."""

    files: tuple[str, ...] = ()
    tokens: int = 0
    room: int = 0
    problems: tuple[str, ...] = ()

    @property
    def over(self) -> int:
        """Tokens by which the instructions pass the room (0: they fit). They are never
        cut: the context is that much over the window, and the developer is told."""
        return max(0, self.tokens - self.room)

    def meta(self) -> dict[str, object]:
        """As a turn records it (``turn.meta["instructions"]``)."""
        meta: dict[str, object] = {"files": list(self.files), "tokens": self.tokens,
                                   "room": self.room}
        if self.over:
            meta["over"] = self.over
        if self.problems:
            meta["problems"] = list(self.problems)
        return meta

    def note(self) -> str:
        """One line for people ("" when there are none and nothing was refused)."""
        if not self.files and not self.problems:
            return ""
        if self.over:
            return (f"instructions over budget: {self.tokens:,} tok for {self.room:,} free "
                    f"(not cut: the context is {self.over:,} tok over the window)")
        line = f"instructions {len(self.files)} file(s), {self.tokens:,} tok"
        return line + (f"; {len(self.problems)} not read" if self.problems else "")


def sections(found: list[Instruction], count: Callable[[str], int]) -> list[Section]:
    """One pinned ``instructions`` section per file, nearest first."""
    return [Section("instructions", i.source, text, count(text), pinned=True)
            for i in found for text in (i.render(),)]
