"""memory/acting/edits/functions.py: blocks aimed at ``path::Qual.name``, and the check of the
commit an answer was based on (``prepare(base=...)``)."""

from __future__ import annotations

import pytest

from memory.acting.edits import apply, prepare, undo

from ...conftest import FORMS, git
from .test_edits_support import identity, picture, repo

METHOD = """@@@ EDIT app/forms.py::Form.validate_input
@@@ REPLACE
def validate_input(self, value):
    \"\"\"Accept any value.\"\"\"
    return True
@@@ END
"""
NEW_METHOD = ("    def validate_input(self, value):\n        \"\"\"Accept any value.\"\"\"\n"
              "        return True")


@pytest.fixture
def root(tmp_path, monkeypatch):
    identity(monkeypatch)
    return repo(tmp_path, {"app/forms.py": FORMS, "app/data.txt": "x\n"})


def definition_lines(root, qual):
    from memory.index.chunks import chunk_file

    data = (root / "app/forms.py").read_bytes()
    (chunk,) = [c for c in chunk_file("app/forms.py", data) if c.qualname == qual]
    return data.decode().split("\n")[chunk.start - 1:chunk.end]


def test_a_whole_method_is_replaced_in_place_and_reindented(root):
    old = "\n".join(definition_lines(root, "Form.validate_input"))
    assert old.startswith("    def validate_input") and old in FORMS
    before = picture(root)
    prepared = prepare(root, METHOD)
    assert prepared.ok, prepared.message
    after = prepared.changes[0].after.decode()
    assert after == FORMS.replace(old, NEW_METHOD)
    applied = apply(prepared, "accept anything")
    assert applied.ok and undo(root).ok and picture(root) == before


def test_a_decorated_method_is_replaced_with_its_decorator(root):
    old = "\n".join(definition_lines(root, "Form.size"))
    assert old.startswith("    @property\n")
    prepared = prepare(root, "@@@ EDIT app/forms.py::Form.size\n@@@ REPLACE\n"
                       "def size(self):\n    return 0\n@@@ END\n")
    assert prepared.ok, prepared.message
    assert prepared.changes[0].after.decode() == FORMS.replace(
        old, "    def size(self):\n        return 0")


def test_a_search_within_a_definition_and_near_misses(root):
    twice = "def a(value):\n    return value\n\n\ndef b(value):\n    return value\n"
    (root / "app/twice.py").write_text(twice)
    git(root, "add", "app/twice.py")
    git(root, "commit", "-qm", "twice")
    edit = "@@@ SEARCH\nreturn value\n@@@ REPLACE\nreturn -value\n@@@ END\n"
    assert "occur 2 times" in prepare(root, "@@@ EDIT app/twice.py\n" + edit).message
    scoped = prepare(root, "@@@ EDIT app/twice.py::b\n" + edit)
    assert scoped.ok, scoped.message
    assert scoped.changes[0].after.decode() == twice[::-1].replace(
        "eulav nruter", "eulav- nruter", 1)[::-1]
    assert scoped.changes[0].notes == ("block 1 matched at line 6 ignoring indentation",)
    missing = prepare(root, METHOD.replace("Form.validate_input", "Form.validate"))
    assert not missing.ok and "Form.validate is not defined in app/forms.py" in missing.message
    assert "did you mean Form.validate_input" in missing.message
    other = prepare(root, METHOD.replace("app/forms.py", "app/data.txt"))
    assert not other.ok and "work in Python files only" in other.message
    absent = prepare(root, METHOD.replace("app/forms.py", "app/nope.py"))
    assert not absent.ok and "no such file" in absent.message


def test_an_answer_based_on_an_older_commit_is_refused_for_files_changed_since(root):
    base = git(root, "rev-parse", "HEAD").strip()
    (root / "app/forms.py").write_text(FORMS + "\n# reviewed\n")
    git(root, "commit", "-qam", "the developer's own commit")
    edit = "@@@ EDIT app/data.txt\n@@@ SEARCH\nx\n@@@ REPLACE\ny\n@@@ END\n"
    assert prepare(root, edit, base=base).ok  # data.txt did not change since base
    refused = prepare(root, METHOD, base=base)
    assert not refused.ok
    assert f"changed since the model saw it (at commit {base[:10]})" in refused.message
    unknown = prepare(root, edit, base="0" * 40)
    assert not unknown.ok and "is not in the repository" in unknown.message


def test_a_definition_named_without_its_file_is_found_through_the_index(demo_repo, embedder):
    from memory.index.repo import RepoIndex
    from memory.store import Store

    index = RepoIndex(demo_repo, Store(demo_repo.parent / "data" / "index.lance"), embedder)
    index.refresh()
    bare = METHOD.replace("app/forms.py::", "::")
    prepared = prepare(demo_repo, bare, index=index)
    assert prepared.ok, prepared.message
    assert prepared.paths == ["app/forms.py"]
    assert "name the file" in prepare(demo_repo, bare).message
    missing = prepare(demo_repo, bare.replace("Form.validate_input", "Nope.nothing"),
                      index=index)
    assert not missing.ok and "Nope.nothing is not in the repository index" in missing.message
    (demo_repo / "app/more.py").write_text("def connect(url):\n    return url\n")
    git(demo_repo, "add", "app/more.py")
    git(demo_repo, "commit", "-qm", "two connects")
    index.refresh()
    twice = prepare(demo_repo, "@@@ EDIT ::connect\n@@@ REPLACE\ndef connect():\n"
                    "    pass\n@@@ END\n", index=index)
    assert not twice.ok
    assert "connect is defined in 2 files (app/db.py, app/more.py); name one" in twice.message
