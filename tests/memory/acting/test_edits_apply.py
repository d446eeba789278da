"""memory/acting/edits/commit.py and revert.py on real repositories: an answer applied is one
commit of its files only; undo puts the tree back byte for byte; the developer's
uncommitted work is never lost, touched or committed."""

from __future__ import annotations

import os

import pytest

from memory.acting.edits import TRAILER, apply, is_engram_commit, message, prepare, undo

from ...conftest import git, make_repo
from .test_edits_support import CALC, block, identity, picture, repo

FIX = block("app/calc.py", "def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b")


@pytest.fixture(autouse=True)
def _identity(monkeypatch):
    identity(monkeypatch)


@pytest.fixture
def root(tmp_path):
    return repo(tmp_path)


def committed_paths(root, rev="HEAD"):
    return git(root, "show", "--name-only", "--format=", rev).split()


def test_a_scripted_answer_is_applied_committed_and_undone_byte_for_byte(root):
    before = picture(root)
    old_head = git(root, "rev-parse", "HEAD").strip()
    answer = ("Fixed the sign, and added a test.\n\n" + FIX
              + block("tests/test_calc.py", "", "from app.calc import add\n\n\n"
                      "def test_add():\n    assert add(2, 3) == 5"))
    prepared = prepare(root, answer)
    assert prepared.ok, prepared.message
    assert "+    return a + b" in prepared.diff and "+++ b/tests/test_calc.py" in prepared.diff
    applied = apply(prepared, "Please fix add(), it subtracts.\nAnd add a test.", "turn-7")
    assert applied.ok, applied.message
    assert applied.paths == ("app/calc.py", "tests/test_calc.py")
    assert git(root, "rev-parse", "HEAD").strip() == applied.commit
    assert git(root, "rev-parse", "HEAD~1").strip() == old_head
    text = git(root, "show", "-s", "--format=%B", "HEAD")
    assert text.startswith("engram: Please fix add(), it subtracts.\n\n")
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    assert text.rstrip("\n").endswith(f"\n\n{TRAILER}: turn-7\nEngram-Tree: {tree}")
    assert is_engram_commit(text)
    assert git(root, "log", "-1", f"--format=%(trailers:key={TRAILER},valueonly)").strip() == (
        "turn-7")
    assert sorted(committed_paths(root)) == ["app/calc.py", "tests/test_calc.py"]
    assert (root / "app/calc.py").read_text() == CALC.replace("a - b", "a + b", 1)
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    undone = undo(root)
    assert undone.ok, undone.message
    assert undone.commit == applied.commit and "restored" in undone.message
    assert picture(root) == before  # the new file and its new folder are gone too
    again = undo(root)
    assert not again.ok and "is not an edit engram applied" in again.message
    assert picture(root) == before


def test_uncommitted_work_in_the_same_file_is_refused_and_kept(root):
    (root / "app/calc.py").write_text(CALC + "# my own unfinished work\n")
    before = picture(root)
    prepared = prepare(root, FIX)
    assert not prepared.ok and "app/calc.py" in prepared.message
    assert "has uncommitted changes" in prepared.message
    assert not apply(prepared, "fix").ok
    assert picture(root) == before


def test_uncommitted_work_in_other_files_stays_as_it_was_and_is_not_committed(root):
    (root / "notes.txt").write_text("keep me, and my unstaged line\n")
    (root / "README.md").write_text("# calc, staged\n")
    git(root, "add", "README.md")
    (root / "README.md").write_text("# calc, staged, then changed again\n")
    (root / "scratch.py").write_text("untracked = True\n")
    (root / "staged_new.py").write_text("staged = True\n")
    git(root, "add", "staged_new.py")
    mine = {p: (root / p).read_bytes()
            for p in ("notes.txt", "README.md", "scratch.py", "staged_new.py")}
    status = git(root, "status", "--porcelain")
    staged = git(root, "diff", "--cached")
    applied = apply(prepare(root, FIX), "fix add")
    assert applied.ok, applied.message
    assert committed_paths(root) == ["app/calc.py"]
    assert {p: (root / p).read_bytes() for p in mine} == mine
    assert git(root, "status", "--porcelain") == status  # the edit itself is clean
    assert git(root, "diff", "--cached") == staged  # README's staged change still staged
    assert undo(root).ok
    assert {p: (root / p).read_bytes() for p in mine} == mine
    assert git(root, "diff", "--cached") == staged
    assert git(root, "status", "--porcelain") == status
    assert (root / "app/calc.py").read_text() == CALC


def test_a_file_changed_between_the_diff_and_yes_is_refused(root):
    prepared = prepare(root, FIX)
    (root / "app/calc.py").write_text(CALC + "# typed while reading the diff\n")
    before = picture(root)
    applied = apply(prepared, "fix")
    assert not applied.ok and "has uncommitted changes" in applied.message
    assert "nothing was written" in applied.message and picture(root) == before
    git(root, "commit", "-qam", "committed meanwhile")
    moved = apply(prepared, "fix")
    assert not moved.ok and "HEAD moved since the diff was made" in moved.message
    assert not apply(prepare(root, "no blocks"), "fix").ok


def test_a_new_file_created_between_the_diff_and_yes_is_kept(root):
    prepared = prepare(root, block("new.py", "", "x = 1"))
    (root / "new.py").write_text("mine = 1\n")
    applied = apply(prepared, "add new.py")
    assert not applied.ok and "new.py is untracked" in applied.message
    assert (root / "new.py").read_text() == "mine = 1\n"


def test_a_symlink_or_file_appearing_between_the_diff_and_yes_is_refused(root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    prepared = prepare(root, block("pkg/new.py", "", "x = 1"))
    os.symlink(outside, root / "pkg")
    applied = apply(prepared, "new")
    assert not applied.ok and "goes through a symlink" in applied.message
    assert list(outside.iterdir()) == []
    (root / "pkg").unlink()
    (root / "pkg").mkdir()
    (root / "pkg/new.py").mkdir()
    applied = apply(prepared, "new")
    assert not applied.ok and "is not a regular file" in applied.message


def test_nothing_happens_in_the_middle_of_a_merge(root):
    assert apply(prepare(root, FIX), "fix").ok
    merge_head = root / ".git" / "MERGE_HEAD"
    merge_head.write_text(git(root, "rev-parse", "HEAD"))
    before = picture(root)
    refused = prepare(root, block("README.md", "# calc", "# Calc"))
    assert not refused.ok and "in the middle of a merge" in refused.message
    assert "in the middle of a merge" in undo(root).message
    assert picture(root) == before
    merge_head.unlink()
    assert undo(root).ok


def test_undo_refuses_when_the_files_changed_or_head_is_not_engrams(root):
    assert apply(prepare(root, FIX), "fix").ok
    (root / "app/calc.py").write_text("# rewritten by hand\n")
    before = picture(root)
    refused = undo(root)
    assert not refused.ok and "app/calc.py changed since engram's commit" in refused.message
    assert picture(root) == before
    git(root, "commit", "-qam", "developer's commit on top")
    before = picture(root)
    refused = undo(root)
    assert not refused.ok and "'developer's commit on top') is not an edit engram applied" in (
        refused.message)
    assert picture(root) == before


def test_undo_refuses_an_amended_commit(root):
    assert apply(prepare(root, FIX), "fix").ok
    (root / "notes.txt").write_text("added to engram's commit by hand\n")
    git(root, "commit", "-q", "--amend", "--no-edit", "-a")
    before = picture(root)
    refused = undo(root)
    assert not refused.ok and "was amended since engram committed it" in refused.message
    assert picture(root) == before
    git(root, "commit", "-q", "--amend", "-m", "fixed by hand")
    assert "is not an edit engram applied" in undo(root).message


def test_undo_refuses_a_commit_already_on_a_remote_branch(root):
    assert apply(prepare(root, FIX), "fix").ok
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    before = picture(root)
    refused = undo(root)
    assert not refused.ok and "already on origin/main" in refused.message
    assert picture(root) == before


def test_undo_keeps_an_untracked_file_put_in_a_folder_engram_created(root):
    assert apply(prepare(root, block("pkg/new.py", "", "x = 1")), "new").ok
    (root / "pkg/mine.txt").write_text("mine\n")
    assert undo(root).ok
    assert not (root / "pkg/new.py").exists()
    assert (root / "pkg/mine.txt").read_text() == "mine\n"


def test_the_first_commit_of_an_empty_repository_and_its_undo(tmp_path):
    root = make_repo(tmp_path / "empty", {}, commit=False)
    (root / "draft.txt").write_text("untracked draft\n")
    before = picture(root)
    applied = apply(prepare(root, block("hello.py", "", "print('hello')")), "say hello")
    assert applied.ok, applied.message
    assert committed_paths(root) == ["hello.py"]
    assert git(root, "status", "--porcelain") == "?? draft.txt\n"
    assert undo(root).ok
    assert picture(root) == before and before["head"] == ""


def test_the_executable_bit_and_other_bytes_are_kept(root):
    (root / "run.sh").write_text("#!/bin/sh\necho one\r\n")
    os.chmod(root / "run.sh", 0o755)
    git(root, "add", "run.sh")
    git(root, "commit", "-qm", "script")
    before = picture(root)
    applied = apply(prepare(root, block("run.sh", "echo one", "echo two")), "two")
    assert applied.ok, applied.message
    assert (root / "run.sh").read_bytes() == b"#!/bin/sh\necho two\r\n"
    assert os.stat(root / "run.sh").st_mode & 0o777 == 0o755
    assert git(root, "ls-files", "-s", "run.sh").startswith("100755 ")
    assert undo(root).ok and picture(root) == before


def test_a_failed_commit_puts_the_files_back(root, monkeypatch, tmp_path):
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(root, "config", "user.useConfigOnly", "true")
    before = picture(root)
    applied = apply(prepare(root, FIX + block("pkg/new.py", "", "x = 1")), "fix")
    assert not applied.ok and "could not be committed" in applied.message
    assert "put back as they were" in applied.message
    assert picture(root) == before


def test_the_commit_message_names_the_request_without_secrets(monkeypatch):
    monkeypatch.setenv("MY_API_TOKEN", "s3cr3t-value-123")
    text = message("use s3cr3t-value-123 and sk-abcdefghijklmnopqrstuvwx to log in\n"
                   "then retry " + "x" * 3000)
    assert "s3cr3t" not in text and "sk-abc" not in text and "[REDACTED]" in text
    subject, _, rest = text.partition("\n\n")
    assert subject.startswith("engram: use [REDACTED]") and len(subject) <= 72
    assert rest.endswith(f"\n\n{TRAILER}: answer\n") and "[…]" in rest
    assert message("").startswith("engram: edit proposed by the assistant\n\n")
    assert not is_engram_commit("fix: a thing\n\nEngram-Edit mentioned in prose\n")


def failing_second_write(monkeypatch, module):
    """Make ``module._write`` fail on its second call (a full disk, say)."""
    real = module._write
    calls = []

    def write(path, data, mode):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data, mode)

    monkeypatch.setattr(module, "_write", write)
    return calls


TWO_FILES = FIX + block("README.md", "# calc", "# Calc")


def test_a_failed_write_during_apply_puts_everything_back(root, monkeypatch):
    import memory.acting.edits.commit as commit

    before = picture(root)
    prepared = prepare(root, TWO_FILES)
    calls = failing_second_write(monkeypatch, commit)
    applied = apply(prepared, "two files")
    assert not applied.ok and "No space left on device" in applied.message
    assert len(calls) >= 3  # the failed one, and the first file put back
    assert picture(root) == before


def test_a_failed_write_during_undo_puts_the_commit_back(root, monkeypatch):
    import memory.acting.edits.revert as undo_module

    assert apply(prepare(root, TWO_FILES), "two files").ok
    before = picture(root)
    failing_second_write(monkeypatch, undo_module)
    undone = undo(root)
    assert not undone.ok and "undo failed: No space left on device" in undone.message
    assert picture(root) == before
    monkeypatch.undo()
    assert undo(root).ok
