"""A replay pair's clone at the session's commit, through the edit engine's git runner
(memory.acting.edits.gitstate): the sha, the pair's own committer, clear errors."""

from __future__ import annotations

import pytest

from replay.agentic.checkout import CheckoutError, checkout, has_commit
from tests.conftest import git, make_repo


def test_a_clone_at_the_commit_with_its_own_committer(tmp_path):
    repo = make_repo(tmp_path / "repo", {"calc.py": "def double(x):\n    return 2 * x\n"})
    head = git(repo, "rev-parse", "HEAD").strip()
    assert has_commit(repo, head) and not has_commit(repo, "0123abcd")
    sha = checkout(repo, "", tmp_path / "work" / "clone")
    clone = tmp_path / "work" / "clone"
    assert sha == head and (clone / "calc.py").read_text().startswith("def double")
    assert git(clone, "config", "user.name").strip() == "engram replay"
    with pytest.raises(CheckoutError, match="commit 0123abcd is not in"):
        checkout(repo, "0123abcd", tmp_path / "work" / "other")
    with pytest.raises(CheckoutError, match=r"git clone failed: .*\(in "):
        checkout(repo, "", tmp_path / "work" / "clone")  # there already
    with pytest.raises(CheckoutError, match="not a git repository"):
        checkout(tmp_path / "work", "", tmp_path / "elsewhere")
