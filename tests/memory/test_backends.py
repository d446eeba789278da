from __future__ import annotations

import textwrap

import pytest

from memory.backends import BackendEnv, Registry, UnknownBackend, registry
from memory.backends.base import Backend
from memory.backends.empty import EmptyBackend
from memory.backends.full import FullBackend
from memory.backends.rag import RagBackend
from memory.llm.client import LLM, LLMConfig
from memory.types import Turn

TOPICS = [
    "How do I run the database migration for the users table?",
    "Make the button on the login page blue.",
    "Which database index speeds up the users table migration?",
    "Write a haiku about autumn leaves.",
    "Roll back the last database migration safely.",
    "What font does the landing page use?",
    "Can the migration add a column to the database without downtime?",
    "Translate 'good morning' into French.",
    "Squash the old database migrations into one.",
    "Center the logo in the page header.",
]
DATABASE_TURNS = [0, 2, 4, 6, 8]


def env_for(embedder, script_model="scripted/test"):
    return BackendEnv(llm=LLM(LLMConfig(model=script_model)), embedder=embedder)


def turns():
    return [Turn(i, text, f"answer {i}") for i, text in enumerate(TOPICS)]


async def test_rag_picks_the_five_most_similar_turns_in_order(embedder, script):
    rag = RagBackend(env_for(embedder))
    for turn in turns():
        await rag.observe(turn)
    pack = await rag.context("How should I write a database migration for users?",
                             budget=10_000)
    picked = sorted({int(s.source.split(":")[1]) for s in pack.of_kind("history")})
    assert picked == DATABASE_TURNS
    sources = [s.source for s in pack.of_kind("history")]
    assert sources == sorted(sources, key=lambda s: int(s.split(":")[1]))  # chronological
    roles = [s.role for s in pack.of_kind("history")]
    assert roles == ["user", "assistant"] * 5


async def test_rag_catch_up_in_one_batch_equals_turn_by_turn(embedder, script):
    one, many = RagBackend(env_for(embedder)), RagBackend(env_for(embedder))
    for turn in turns():
        await one.observe(turn)
    await many.observe_many(turns())
    assert one.state_digest() == many.state_digest()


async def test_full_drops_the_oldest_turns_whole_when_over_the_window(embedder, script):
    full = FullBackend(env_for(embedder))
    for turn in turns():
        await full.observe(turn)
    everything = await full.context("next?", budget=100_000)
    assert len(everything.of_kind("history")) == 20
    last_three = sum(s.tokens for s in everything.of_kind("history")[-6:])
    small = await full.context("next?", budget=last_three + 1)
    kept = [s.source for s in small.of_kind("history")]
    assert kept == ["turn:7", "turn:7", "turn:8", "turn:8", "turn:9", "turn:9"]
    assert sum(s.tokens for s in small.sections) <= last_three + 1


async def test_empty_has_no_history(embedder, script):
    empty = EmptyBackend(env_for(embedder))
    for turn in turns():
        await empty.observe(turn)
    pack = await empty.context("database migration", budget=10_000)
    assert pack.of_kind("history") == []
    assert pack.to_messages()[-1] == {"role": "user", "content": "database migration"}


async def test_repository_adaptation_gives_top_functions(make_agent):
    agent = make_agent("empty")
    pack = await agent.context("apply schema migrations")
    repo = pack.of_kind("repo")
    assert 0 < len(repo) <= 10
    assert "app/db.py::migrate" in [s.source for s in repo]
    assert all("::" in s.source for s in repo)


def test_builtins_are_registered():
    assert {"full", "empty", "rag"} <= set(registry.names())


def test_unknown_backend_is_a_clear_error_listing_the_known_ones():
    with pytest.raises(UnknownBackend) as info:
        registry.spec("nosuch")
    message = str(info.value)
    assert "nosuch" in message
    for name in ("empty", "full", "rag"):
        assert name in message


def test_a_backend_from_an_entry_point_in_another_distribution(tmp_path, monkeypatch,
                                                                embedder, script):
    (tmp_path / "echo_backend.py").write_text(textwrap.dedent('''
        from memory.types import ContextPack

        class EchoBackend:
            name = "echo"

            def __init__(self, env):
                self.env = env

            async def context(self, query, *, budget):
                return ContextPack(query)

            async def observe(self, turn):
                pass

            def state_digest(self):
                return "echo"
    '''))
    info = tmp_path / "engram_echo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: engram-echo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[engram.backends]\necho = echo_backend:EchoBackend\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    fresh = Registry()
    assert "echo" in fresh.names()
    assert fresh.spec("echo").origin == "engram-echo"
    backend = fresh.create("echo", env_for(embedder))
    assert isinstance(backend, Backend) and backend.name == "echo"


def test_a_store_location_is_the_data_dir_or_a_shared_uri(tmp_path, monkeypatch, embedder):
    from memory.backends import BackendEnv
    from memory.llm.client import LLM, LLMConfig
    from memory.store import Store

    env = BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                     data_dir=tmp_path / "home")
    assert env.store_location() == tmp_path / "home" / "index.lance"
    env.store_uri = "s3://bucket/runs/x__mem0-1234/"
    assert env.store_location() == "s3://bucket/runs/x__mem0-1234/index.lance"
    monkeypatch.chdir(tmp_path)
    store = Store(env.store_location())  # LanceDB opens a URI itself: no local folder
    assert store.uri == "s3://bucket/runs/x__mem0-1234/index.lance"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
