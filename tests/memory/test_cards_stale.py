"""cards' git-aware staleness sees engram's own commits: an edit the edit engine applies
and commits (a real repository in a tmp dir, ``memory.acting.edits.prepare`` / ``apply``)
marks the memories about the function it changed stale, says the change was engram's,
and ``/undo`` (``memory.acting.edits.undo``) makes them valid again."""

from __future__ import annotations

from memory.acting.edits import apply, prepare, undo
from memory.backends import registry
from memory.types import Turn
from tests.memory.acting.test_edits_support import block, identity
from tests.memory.cards_support import CONNECT_5, facts

from ..conftest import git

MIGRATE = "migrate must stop at the first failure."


async def stated(cards_env, script):
    cards = registry.create("cards", cards_env())
    script.push(facts((CONNECT_5, "app/db.py::connect")), facts((MIGRATE, "app/db.py::migrate")))
    await cards.observe(Turn(0, CONNECT_5, "ok"))
    await cards.observe(Turn(1, MIGRATE, "ok"))
    cards.drain_records()
    return cards, cards.graph.nodes["fact:0:0"], cards.graph.nodes["fact:1:0"]


async def test_an_edit_engram_commits_makes_what_it_changed_stale_and_undo_clears_it(
        cards_env, script, repo_index, monkeypatch):
    identity(monkeypatch)
    cards, connect, migrate = await stated(cards_env, script)
    root = repo_index.root
    prepared = prepare(root, block("app/db.py", "    return (url, timeout)",
                                   "    return (url, timeout * 2)"))
    assert prepared.ok, prepared.message
    applied = apply(prepared, "connect should double its timeout", "turn-2")
    assert applied.ok and applied.paths == ("app/db.py",), applied.message
    script.push(facts())
    await cards.observe(Turn(2, "thanks", "ok"))
    assert connect.stale == f"app/db.py::connect changed in {applied.commit[:8]} by engram's edit"
    assert migrate.stale == ""  # the same file, a function the edit left alone
    records = cards.drain_records()
    assert [(r["op"], r["id"]) for r in records if r["op"] in ("STALE", "VALID")] == [
        ("STALE", "fact:0:0")]
    await cards.context("connect timeout", budget=3000)
    [card] = [c for c in cards.last_pack.cards if c.node_id == "fact:0:0"]
    assert "STALE: app/db.py::connect changed in" in card.render()

    undone = undo(root)
    assert undone.ok, undone.message
    script.push(facts())
    await cards.observe(Turn(3, "fine", "ok"))
    assert connect.stale == "" and migrate.stale == ""  # the code is as it was stated
    records = cards.drain_records()
    assert [(r["op"], r["id"]) for r in records if r["op"] in ("STALE", "VALID")] == [
        ("VALID", "fact:0:0")]


async def test_the_last_commit_that_touched_the_file_is_named(cards_env, script, repo_index,
                                                             monkeypatch):
    """An engram edit of another file, then the developer's commit of this one: the
    developer's commit is where it changed; and a change not committed yet is in the
    working tree."""
    identity(monkeypatch)
    cards, connect, migrate = await stated(cards_env, script)
    root = repo_index.root
    forms = (root / "app/forms.py").read_text()
    applied = apply(prepare(root, block("app/forms.py", '            raise ValueError("empty")',
                                        '            raise ValueError("empty value")')),
                    "a clearer message")
    assert applied.ok, applied.message
    db = (root / "app/db.py").read_text()
    (root / "app/db.py").write_text(db.replace("return (url, timeout)", "return (url, 1)"))
    git(root, "commit", "-qam", "connect ignores the timeout")
    mine = git(root, "rev-parse", "HEAD").strip()
    (root / "app/db.py").write_text((root / "app/db.py").read_text().replace(
        "step(conn)", "step(conn, strict=True)"))
    script.push(facts())
    await cards.observe(Turn(2, "ok", "ok"))
    assert connect.stale == f"app/db.py::connect changed in {mine[:8]}"
    assert migrate.stale == "app/db.py::migrate changed in the working tree"
    assert "empty value" in (root / "app/forms.py").read_text() != forms
