"""``full`` in a ``qa`` run, as LongCodeBench sets it: the repository's files sorted by
name (tests left out, as the paper does), each as ``[start of PATH] ... [end of PATH]``,
cut to the token budget (whole files while they fit, then the next file's first lines)."""

from __future__ import annotations

from pathlib import Path

from memory.backends.base import BackendEnv, Digest
from memory.types import ContextPack, Section, Turn
from replay.locoeval.prepare import is_test_file

SUFFIXES = (".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".json", ".yaml", ".yml")
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".tox", ".mypy_cache"}


def repo_files(root: Path) -> list[tuple[str, str]]:
    """(relative path, text) of the repository's text files, sorted by path; tests out."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if (not path.is_file() or path.suffix not in SUFFIXES or is_test_file(rel)
                or SKIP_DIRS & set(path.relative_to(root).parts)):
            continue
        try:
            out.append((rel, path.read_text("utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def file_block(rel: str, text: str) -> str:
    return f"[start of {rel}]\n{text}\n[end of {rel}]"


class RepoTextBackend:
    """The repository as text, truncated to the budget; no memory of turns."""

    name = "full"

    def __init__(self, env: BackendEnv) -> None:
        if env.repo is None:
            raise ValueError("the qa `full` baseline needs a repository")
        self.env = env
        self.files = repo_files(Path(env.repo.root))
        self._digest = Digest()

    async def context(self, query: str, *, budget: int) -> ContextPack:
        sections: list[Section] = []
        used = 0
        for rel, text in self.files:
            block = file_block(rel, text)
            tokens = self.env.count(block)
            if used + tokens <= budget:
                sections.append(Section("repo", rel, block, tokens))
                used += tokens
                continue
            lines = text.splitlines()  # the first file that does not fit: its first lines
            low, high = 0, len(lines)
            while low < high:  # the most lines that fit
                mid = (low + high + 1) // 2
                if used + self.env.count(file_block(rel, "\n".join(lines[:mid]))) <= budget:
                    low = mid
                else:
                    high = mid - 1
            if low:
                cut = file_block(rel, "\n".join(lines[:low]))
                sections.append(Section("repo", rel, cut, self.env.count(cut)))
            break
        return ContextPack(query, sections, self.env.count(query))

    async def observe(self, turn: Turn) -> None:
        """Nothing to learn: the repository text is all it shows."""

    def state_digest(self) -> str:
        return self._digest.value
