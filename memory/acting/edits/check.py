"""Check every block of an answer against the work tree before anything is written.

``prepare`` reads the files the answer edits, applies the blocks in memory in order
(several blocks may edit one file) and returns each changed file once with its diff.
Any block that does not apply makes the whole answer refused: ``ok`` False, every
problem listed, no changes (all or nothing per answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memory import _git
from memory.redact import redact

from . import gitstate
from .blocks import parse
from .diffs import unified
from .functions import definition, find_files, find_within, replace_definition, split_target
from .matching import NoMatch, find, substitute
from .paths import PathRefused, safe_relative
from .results import Edit, FileChange, Parsed, Prepared, Problem
from .textfile import MAX_FILE_BYTES, NotText, TextLines, check_size, decode, split_lines

if TYPE_CHECKING:
    from memory.index.repo import RepoIndex


@dataclass
class _File:
    """One file while the answer's blocks are applied to it in memory."""

    path: str
    before: bytes | None
    text: TextLines
    mode: str
    notes: list[str] = field(default_factory=list)


def prepare(root: Path, answer: str | Parsed | Sequence[Edit],
            seen: Mapping[str, str] | None = None, base: str = "",
            index: RepoIndex | None = None, max_bytes: int = MAX_FILE_BYTES) -> Prepared:
    """The answer's changes, checked, with a diff per file; nothing is written.

    What the model saw, when known, makes a file changed since then a refusal:
    ``seen`` maps paths to the blob id of the content it was shown
    (``gitstate.snapshot``); ``base`` is the commit the turn started from (a file whose
    committed content differs between ``base`` and HEAD changed since). ``index`` finds
    the file of a block aimed at ``::Qual.name`` alone.
    """
    try:
        top = _git.toplevel(Path(root))
    except _git.NotAGitRepo as exc:
        return Prepared(False, str(exc), Path(root))
    parsed = parse(answer) if isinstance(answer, str) else (
        answer if isinstance(answer, Parsed) else Parsed(tuple(answer)))
    problems = list(parsed.problems)
    if not parsed.edits and not problems:
        return Prepared(False, "the answer holds no edit blocks", top)
    edits, unfound = find_files(parsed.edits, index)
    problems += unfound
    try:
        head = gitstate.head(top)
        busy = gitstate.operation_in_progress(top)
        if busy:
            return Prepared(False, f"the repository is in the middle of {busy}; finish it "
                            "first (nothing was written)", top)
        files, where, more = _load(top, edits, seen or {}, max_bytes)
        more += _changed_since_base(top, base, head, edits, where)
    except gitstate.GitFailed as exc:
        return Prepared(False, redact(str(exc)), top)
    problems += more
    for edit in edits:
        file = files.get(where.get(edit.block, ""))
        if file is not None:
            problem = _apply_block(file, edit)
            if problem:
                problems.append(problem)
                files.pop(file.path)  # later blocks on a broken file would mislead
    changes = [] if problems else _changes(files.values(), max_bytes, problems)
    if problems:
        problems.sort(key=lambda p: p.block)
        lines = "\n".join(f"- {p}" for p in problems)
        return Prepared(False, redact(f"nothing was written; {len(problems)} problem(s):\n"
                                      + lines), top, [], problems, head)
    if not changes:
        return Prepared(False, "the edits change nothing", top, [], [], head)
    names = ", ".join(c.path for c in changes)
    return Prepared(True, f"{len(changes)} file(s) to change: {names}", top, changes, [], head)


def _load(top: Path, edits: Sequence[Edit], seen: Mapping[str, str],
          max_bytes: int) -> tuple[dict[str, _File], dict[int, str], list[Problem]]:
    """Each edited file's current content by its resolved path (``./a.py`` and ``a.py``
    are one file), the resolved path of each block, and the problems found."""
    problems: list[Problem] = []
    resolved: dict[int, str] = {}
    for edit in edits:
        try:
            resolved[edit.block] = safe_relative(top, split_target(edit.path)[0])
        except PathRefused as exc:
            problems.append(Problem(edit.block, edit.path, str(exc)))
    first_block = {}
    for edit in edits:
        if edit.block in resolved:
            first_block.setdefault(resolved[edit.block], edit)
    states = gitstate.states(top, list(first_block))
    files: dict[str, _File] = {}
    for rel, edit in first_block.items():
        file = _read(top, rel, edit, states[rel], seen, max_bytes)
        if isinstance(file, Problem):
            problems.append(file)
        else:
            files[rel] = file
    return files, resolved, problems


def _read(top: Path, rel: str, edit: Edit, state: gitstate.PathState,
          seen: Mapping[str, str], max_bytes: int) -> _File | Problem:
    def problem(message: str) -> Problem:
        return Problem(edit.block, rel, message)

    reason = gitstate.dirty_reason(state)
    if reason:
        return problem(reason)
    full = top / rel
    if not full.exists():
        if edit.search or split_target(edit.path)[1]:
            return problem("no such file (to create it, leave SEARCH empty)")
        return _File(rel, None, TextLines([]), "100644")
    try:
        data = full.read_bytes()
    except OSError as exc:
        return problem(f"cannot be read ({exc.strerror or exc})")
    known = seen.get(rel, "").removeprefix("blob:")
    if known and known != gitstate.blob_hash(data, len(known)):
        return problem("the file changed since the model saw it; ask again with its "
                       "current content")
    try:
        text = decode(data, max_bytes)
    except NotText as exc:
        return problem(str(exc))
    return _File(rel, data, text, state.mode)


def _apply_block(file: _File, edit: Edit) -> Problem | None:
    """Apply one block to ``file`` in memory; the problem if it does not apply."""
    replace = edit.replace.split("\n") if edit.replace else []
    qual = split_target(edit.path)[1]
    if not edit.search and not qual:
        if file.text.lines:
            return Problem(edit.block, file.path, "the file already exists; to change it, "
                           "SEARCH for the lines to replace")
        file.text = TextLines(split_lines("\n".join(replace) + "\n") if replace else [])
        return None
    try:
        if qual:
            span = definition(file.path, qual, file.text)
            if not edit.search:
                file.text.lines = replace_definition(file.text, span, replace)
                return None
            match = find_within(file.text, span, edit.search.split("\n"))
        else:
            match = find(file.text.lines, edit.search.split("\n"))
        file.text.lines = substitute(file.text.lines, match, replace, file.text.newline)
    except NoMatch as exc:
        return Problem(edit.block, file.path, str(exc))
    if match.how != "exact":
        file.notes.append(f"block {edit.block} matched at line {match.start + 1} "
                          f"{match.how}")
    return None


def _changed_since_base(top: Path, base: str, head: str, edits: Sequence[Edit],
                        where: Mapping[int, str]) -> list[Problem]:
    """A problem for each edited file whose committed content differs from ``base``."""
    if not base or base == head:
        return []
    paths = sorted({where[e.block] for e in edits if e.block in where})
    try:
        then = gitstate.tree_blobs(top, base, paths)
    except gitstate.GitFailed:
        return [Problem(0, "", f"the commit the answer was based on ({base[:10]}) is not "
                        "in the repository")]
    now = gitstate.tree_blobs(top, head, paths) if head else {}
    first = {where[e.block]: e.block for e in reversed(edits) if e.block in where}
    return [Problem(first[p], p, f"the file changed since the model saw it (at commit "
                    f"{base[:10]}); ask again with its current content")
            for p in paths if then.get(p) != now.get(p)]


def _changes(files: Iterable[_File], max_bytes: int,
             problems: list[Problem]) -> list[FileChange]:
    changes: list[FileChange] = []
    for file in files:
        after = file.text.encode()
        if after == file.before:
            continue
        try:
            check_size(after, max_bytes)
        except NotText as exc:
            problems.append(Problem(0, file.path, f"after the edits: {exc}"))
            continue
        changes.append(FileChange(file.path, file.before, after, file.mode,
                                  unified(file.path, file.before, after), tuple(file.notes)))
    return changes
