"""``cards`` with ``shared_memory``: a session's facts are kept for the repository and
reach another session's graph; revisions, forgets and pins travel through the kept store;
without it, forget works on the session's own graph."""

from __future__ import annotations

from dataclasses import replace

from memory.backends import registry
from memory.types import Turn
from tests.memory.cards_support import CONNECT_5, CONNECT_10


async def test_facts_revisions_forgets_and_pins_travel_between_sessions(cards_env):
    env = cards_env(shared_memory=True, cards_facts="said")
    first = registry.create("cards", env)
    await first.observe(Turn(0, CONNECT_5, "ok"))
    second = registry.create("cards", replace(env, session_id="s2"))
    [kept] = [n for n in second.graph.current() if n.type == "fact"]
    assert kept.content == CONNECT_5 and kept.subject == "app/db.py::connect"
    assert kept.id in second.watch.anchors  # its anchor came with it

    await first.observe(Turn(1, CONNECT_10, "ok"))  # revises the first statement
    await second.observe(Turn(0, "What else is there?", "ok"))  # syncs first
    assert not kept.current
    assert [n.content for n in second.graph.current() if n.type == "fact"
            and n.content == CONNECT_10]

    newer = next(n for n in second.graph.current() if n.content == CONNECT_10)
    second.shared.pin(newer, True)
    assert newer.id in second.pinned
    assert await second.forget(newer.id) == CONNECT_10
    third = registry.create("cards", replace(env, session_id="s3"))
    assert [n for n in third.graph.current() if n.type == "fact"] == []
    assert third.shared.rows[second.shared.of_node[newer.id]].forgotten


async def test_resuming_a_session_keeps_nothing_twice(cards_env):
    env = cards_env(shared_memory=True, cards_facts="said")
    first = registry.create("cards", env)
    await first.observe(Turn(0, CONNECT_5, "ok"))
    again = registry.create("cards", env)  # the same session rebuilt from its transcript
    assert [n for n in again.graph.nodes if n.startswith("mem:")] == []
    await again.observe_many([Turn(0, CONNECT_5, "ok")])
    rows, _ = again.shared.store.load()
    assert len(rows) == 1 and again.shared.of_node["fact:0:0"] == rows[0].id


async def test_without_shared_memory_forget_is_the_sessions_own(cards_env):
    cards = registry.create("cards", cards_env(cards_facts="said"))
    assert cards.shared is None
    await cards.observe(Turn(0, CONNECT_5, "ok"))
    [item] = cards.memory_items()
    before = cards.state_digest()
    assert await cards.forget(item.id) == CONNECT_5
    assert cards.memory_items() == [] and cards.state_digest() != before
    assert not (cards.env.data_dir / "cards_kept.gen").exists()
