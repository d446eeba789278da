"""memory/_git.py on real repositories made in tmp dirs."""

from __future__ import annotations

import subprocess

import pytest

from memory import _git
from tests.conftest import git, make_repo


def hash_of(root, path):
    return subprocess.run(["git", "-C", str(root), "hash-object", "--", path],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_root_head_and_branch(tmp_path):
    root = make_repo(tmp_path / "r", {"pkg/a.py": "x = 1\n"})
    assert _git.toplevel(root / "pkg") == root.resolve()
    sha = _git.head(root)
    assert len(sha) == 40 and _git.branch(root) == "main"
    git(root, "checkout", "-q", "--detach")
    assert _git.branch(root) == "HEAD" and _git.head(root) == sha
    empty = make_repo(tmp_path / "e", {}, commit=False)
    assert _git.head(empty) == ""


@pytest.mark.parametrize("where", ["missing", "file", "plain"])
def test_not_a_work_tree_is_a_clear_error(tmp_path, where):
    path = {"missing": tmp_path / "nope", "file": tmp_path / "f.txt",
            "plain": tmp_path / "plain"}[where]
    (tmp_path / "f.txt").write_text("x")
    (tmp_path / "plain").mkdir()
    with pytest.raises(_git.NotAGitRepo):
        _git.toplevel(path)


def test_signatures_follow_the_work_tree(tmp_path):
    root = make_repo(tmp_path / "r", {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n",
                                      ".gitignore": "*.log\n"})
    before = _git.file_signatures(root)
    assert before["a.py"] == "blob:" + hash_of(root, "a.py")
    (root / "a.py").write_text("a = 2\n")
    (root / "b.py").unlink()
    (root / "new.py").write_text("n = 1\n")
    (root / "skip.log").write_text("ignored")
    after = _git.file_signatures(root)
    assert after["a.py"] == "blob:" + hash_of(root, "a.py") != before["a.py"]
    assert "b.py" not in after and "skip.log" not in after
    assert after["new.py"].startswith("mtime:") and after["c.py"] == before["c.py"]
    assert _git.blob_id(root, "a.py") == hash_of(root, "a.py")
    assert _git.blob_id(root, "gone.py") == ""


def test_many_modified_files_are_hashed_in_batches(tmp_path):
    files = {f"m{i}.py": f"v = {i}\n" for i in range(_git.HASH_BATCH + 7)}
    root = make_repo(tmp_path / "r", files)
    for name in files:
        (root / name).write_text((root / name).read_text() + "# changed\n")
    after = _git.file_signatures(root)
    assert all(after[n] == "blob:" + hash_of(root, n) for n in ("m0.py", "m206.py"))
    assert len(after) == len(files)
