"""memory/acting/edits/check.py (prepare): every block checked against a real repository before
anything is written; refusals say why and leave the tree as it was."""

from __future__ import annotations

import os

import pytest

from memory.acting.edits import gitstate, prepare
from memory.acting.edits.matching import INDENT, TRAILING

from ...conftest import git
from .test_edits_support import CALC, block, picture, repo

SHAPES = "class Square:\n    def area(self):\n        return self.side ** 2\n"


@pytest.fixture
def root(tmp_path):
    return repo(tmp_path)


def refused(root, answer, **kwargs):
    """Prepare ``answer``, expect a refusal and an untouched tree; the message."""
    before = picture(root)
    result = prepare(root, answer, **kwargs)
    assert not result.ok and result.changes == []
    assert picture(root) == before
    return result.message


def test_a_block_becomes_a_diff_and_nothing_is_written(root):
    before = picture(root)
    result = prepare(root, block("app/calc.py", "def add(a, b):\n    return a - b",
                                 "def add(a, b):\n    return a + b"))
    assert result.ok, result.message
    (change,) = result.changes
    assert change.path == "app/calc.py" and change.before == CALC.encode()
    assert change.after == CALC.replace("return a - b", "return a + b", 1).encode()
    assert change.mode == "100644" and change.notes == ()
    assert change.diff.startswith("--- a/app/calc.py\n+++ b/app/calc.py\n@@ ")
    assert "-    return a - b\n+    return a + b\n" in change.diff
    assert result.head == git(root, "rev-parse", "HEAD").strip()
    assert picture(root) == before


def test_a_new_file_in_a_new_folder(root):
    result = prepare(root, block("pkg/new.py", "", "VALUE = 1"))
    assert result.ok
    (change,) = result.changes
    assert (change.before, change.after) == (None, b"VALUE = 1\n")
    assert change.diff.startswith("--- /dev/null\n+++ b/pkg/new.py\n")
    assert not (root / "pkg").exists()


def test_several_blocks_on_one_file_apply_in_order(root):
    answer = (block("app/calc.py", "def add(a, b):\n    return a - b",
                    "def add(a, b):\n    return a + b")
              + "@@@ SEARCH\ndef sub(a, b):\n@@@ REPLACE\ndef subtract(a, b):\n@@@ END\n"
              + block("./app/calc.py", "def subtract(a, b):", "def minus(a, b):"))
    result = prepare(root, answer)
    assert result.ok, result.message
    (change,) = result.changes
    assert b"def minus(a, b):\n    return a - b\n" in change.after
    assert b"return a + b" in change.after


@pytest.mark.parametrize("path, expected", [
    ("../outside.py", "climbs out with '..'"),
    ("app/../../outside.py", "climbs out with '..'"),
    ("/etc/passwd", "is an absolute path"),
    ("~/.bashrc", "is an absolute path"),
    ("C:/x.py", "is an absolute path"),
    ("app\\calc.py", "holds a backslash"),
    (".git/config", "is inside .git"),
    ("app/.GIT/hooks/pre-commit", "is inside .git"),
    ("app", "is not a regular file"),
    ("README.md/x", "is not a folder"),
    ("a\0b", "control character"),
])
def test_paths_outside_or_odd_are_refused(root, path, expected):
    message = refused(root, block(path, "", "x"))
    assert expected in message and "nothing was written" in message


def test_symlinks_are_not_followed_in_or_out(root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.py").write_text("secret = 1\n")
    os.symlink(outside, root / "out")
    os.symlink("app/calc.py", root / "alias.py")
    git(root, "add", "out", "alias.py")
    git(root, "commit", "-q", "-m", "links")
    message = refused(root, block("out/target.py", "secret = 1", "secret = 2"))
    assert "goes through a symlink (out points outside the repository)" in message
    assert (outside / "target.py").read_text() == "secret = 1\n"
    assert "alias.py points inside the repository" in refused(
        root, block("alias.py", "def add(a, b):", "def plus(a, b):"))
    assert "out points outside" in refused(root, block("out/new.py", "", "x = 1"))


def test_binary_and_huge_files_are_refused(root):
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0IHDR")
    (root / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    git(root, "add", "logo.png", "latin.txt")
    git(root, "commit", "-q", "-m", "binary")
    assert "binary file" in refused(root, block("logo.png", "PNG", "GIF"))
    assert "not UTF-8 text" in refused(root, block("latin.txt", "caf", "cafe"))
    assert "over the 20-byte limit" in refused(
        root, block("app/calc.py", "def add(a, b):", "def plus(a, b):"), max_bytes=20)
    grown = block("README.md", "# calc", "# calc\n" + "x" * 30)
    assert "after the edits: " in refused(root, grown, max_bytes=len("# calc\n") + 5)


def test_a_file_changed_since_the_model_saw_it_is_refused(root):
    seen = gitstate.snapshot(root, ["app/calc.py", "README.md", "gone.py"])
    assert set(seen) == {"app/calc.py", "README.md"}
    edit = block("app/calc.py", "def add(a, b):", "def plus(a, b):")
    assert prepare(root, edit, seen=seen).ok
    (root / "app/calc.py").write_text(CALC + "\n# reviewed\n")
    git(root, "commit", "-q", "-am", "the developer's own change")
    message = refused(root, edit, seen=seen)
    assert "changed since the model saw it" in message
    assert prepare(root, edit, seen={"app/calc.py": "blob:" + git(
        root, "hash-object", "app/calc.py").strip()}).ok


def test_search_text_not_found_or_ambiguous(root):
    message = refused(root, block("app/calc.py", "def add(x, y):", "def add(a, b, c):"))
    assert "the SEARCH lines are not in the file" in message
    assert "looks most like line 1" in message
    message = refused(root, block("app/calc.py", "    return a - b", "    return 0"))
    assert "occur 2 times, at lines 2, 6" in message and "add lines around them" in message
    assert "no such file" in refused(root, block("app/nope.py", "x", "y"))
    assert "already exists" in refused(root, block("README.md", "", "# new"))


def test_whitespace_tolerant_matches_say_which(root):
    trailing = prepare(root, block("app/calc.py", "def add(a, b):   \n    return a - b",
                                   "def add(a, b):\n    return a + b"))
    assert trailing.ok and trailing.changes[0].notes == (
        f"block 1 matched at line 1 {TRAILING}",)
    (root / "app/shapes.py").write_text(SHAPES)
    git(root, "add", "app/shapes.py")
    git(root, "commit", "-q", "-m", "shapes")
    shallow = prepare(root, block("app/shapes.py", "def area(self):\n    return self.side ** 2",
                                  "def area(self):\n    return self.side * self.side"))
    assert shallow.ok, shallow.message
    assert shallow.changes[0].notes == (f"block 1 matched at line 2 {INDENT}",)
    assert shallow.changes[0].after == SHAPES.replace("** 2", "* self.side").encode()
    deep = prepare(root, block("app/calc.py", "        def sub(a, b):\n"
                               "            return a - b", "        def sub(a, b):\n"
                               "            return b - a"))
    assert deep.ok and deep.changes[0].after.endswith(b"def sub(a, b):\n    return b - a\n")
    assert "cannot be shifted" in refused(root, block(
        "app/calc.py", "        def sub(a, b):", "def sub(a, b, c):"))


def test_line_endings_a_missing_final_newline_and_a_bom_are_kept(tmp_path):
    root = repo(tmp_path, {"win.txt": b"one\r\ntwo\r\nthree\r\n", "tail.txt": b"a\nb",
                           "bom.py": "\ufeffx = 1\ny = 2\n".encode()})
    result = prepare(root, block("win.txt", "two", "2\n2.5") + block("tail.txt", "b", "c")
                     + block("bom.py", "x = 1", "x = 10"))
    assert result.ok, result.message
    after = {c.path: c.after for c in result.changes}
    assert after == {"win.txt": b"one\r\n2\r\n2.5\r\nthree\r\n", "tail.txt": b"a\nc",
                     "bom.py": "\ufeffx = 10\ny = 2\n".encode()}
    assert "\\ No newline at end of file" in result.changes[1].diff


def test_one_bad_block_refuses_the_whole_answer(root):
    answer = (block("app/calc.py", "def add(a, b):", "def plus(a, b):")
              + block("pkg/new.py", "", "x = 1")
              + block("README.md", "# nothing like this", "# title"))
    result = prepare(root, answer)
    assert not result.ok and result.changes == []
    assert [(p.block, p.path) for p in result.problems] == [(3, "README.md")]
    assert result.message.startswith("nothing was written; 1 problem(s):\n- block 3 (README.md)")
    malformed = prepare(root, block("README.md", "# calc", "# Calc") + "@@@ EDIT x.py\n")
    assert not malformed.ok
    assert "block 2 (x.py): the EDIT line is followed by no SEARCH/REPLACE block" in (
        malformed.message)
    unfinished = prepare(root, block("README.md", "# calc", "# Calc")
                         + "@@@ EDIT x.py\n@@@ SEARCH\nx\n")
    assert not unfinished.ok and "no '@@@ REPLACE'" in unfinished.message


def test_uncommitted_untracked_or_ignored_files_are_refused(root):
    (root / ".gitignore").write_text("*.env\n")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "ignore")
    (root / "notes.txt").write_text("keep me, edited by hand\n")
    assert "has uncommitted changes (git status 'M')" in refused(
        root, block("notes.txt", "keep me, edited by hand", "x"))
    git(root, "add", "notes.txt")
    assert "has uncommitted changes (git status 'M')" in refused(
        root, block("notes.txt", "keep me, edited by hand", "x"))
    (root / "draft.py").write_text("draft\n")
    assert "is untracked" in refused(root, block("draft.py", "draft", "final"))
    assert "is ignored by git" in refused(root, block("local.env", "", "TOKEN=1"))


def test_no_edit_blocks_or_no_repository(root, tmp_path):
    assert prepare(root, "Just prose.").message == "the answer holds no edit blocks"
    (tmp_path / "plain").mkdir()
    assert "not a git repository" in prepare(tmp_path / "plain", block("a", "", "b")).message
    same = prepare(root, block("README.md", "# calc", "# calc"))
    assert not same.ok and same.message == "the edits change nothing"
