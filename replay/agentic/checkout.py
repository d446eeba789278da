"""The repository at the session's commit, for one replay pair, and the final verdict.

Each pair gets its own clone (``git clone --shared``: the objects are borrowed, the
working tree and its commits are the pair's), detached at the session's commit, with a
committer identity of its own so the replayed answers' edits can be committed there
(``memory.acting.edits``). The developer's repository is only read.

The verdict on the final tree is the sandbox's (``replay.sandbox``): the tests run in
the jail on a copy of the clone, each target in a pytest process of its own, and a
process the tested code does not share decides what passed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memory.acting.edits import gitstate
from replay.sandbox.sandbox import Limits, Sandbox

GIT_TIMEOUT = 120.0
IDENTITY = (("user.name", "engram replay"), ("user.email", "replay@engram.invalid"))


class CheckoutError(ValueError):
    """The repository or the commit a replay needs is not there."""


def _git(root: Path, *args: str) -> str:
    """``git ARGS`` in ``root`` through the edit engine's runner (memory.acting.edits.
    gitstate), its failure a ``CheckoutError`` naming the repository."""
    try:
        return gitstate.text(root, *args, timeout=GIT_TIMEOUT)
    except gitstate.GitFailed as exc:
        raise CheckoutError(f"{exc} (in {root})") from exc


def has_commit(repo: Path, commit: str) -> bool:
    try:
        _git(Path(repo), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
    except CheckoutError:
        return False
    return True


def checkout(repo: Path, commit: str, dest: Path) -> str:
    """A clone of ``repo`` at ``commit`` ("" for its HEAD) in ``dest``; the commit's sha."""
    if not (Path(repo) / ".git").exists():
        raise CheckoutError(f"{repo} is not a git repository (a replay starts from a commit)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    _git(dest.parent, "clone", "-q", "--shared", "--no-checkout", str(Path(repo).resolve()),
         str(dest))
    target = commit or "HEAD"
    try:
        sha = _git(dest, "rev-parse", "--verify", "--quiet", f"{target}^{{commit}}").strip()
    except CheckoutError as exc:
        raise CheckoutError(f"commit {target} is not in {repo}") from exc
    _git(dest, "checkout", "-q", "--detach", sha)
    for key, value in IDENTITY:
        _git(dest, "config", key, value)
    return sha


def tracked_tests(root: Path) -> list[str]:
    """The test files git tracks in ``root`` (pytest's default names)."""
    names = _git(root, "ls-files", "-z").split("\0")
    return sorted(n for n in names if n.endswith(".py") and (
        PurePosixPath(n).name.startswith("test_") or PurePosixPath(n).name.endswith("_test.py")))


@dataclass
class Verdict:
    """Whether the final tree's tests pass, as the sandbox's runner saw them."""

    passed: bool
    targets: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    passed_tests: int = 0
    sandbox: str = ""
    forged: bool = False
    timed_out: bool = False
    seconds: float = 0.0
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def final_tests(root: Path, targets: tuple[str, ...] | list[str], limits: Limits) -> Verdict:
    """Run ``targets`` (none: every test file) of the tree at ``root`` in the sandbox."""
    chosen = list(targets) or tracked_tests(root)
    if not chosen:
        return Verdict(False, error="no tests to run: the spec names none and git tracks "
                                    "no test_*.py or *_test.py file")
    with Sandbox(copy_from=root, limits=limits) as box:
        ran = box.pytest(*chosen)
    return Verdict(ran.ok, chosen, sorted(ran.failed), len(ran.passed), ran.sandbox,
                   ran.forged, ran.timed_out, round(ran.seconds, 3))
