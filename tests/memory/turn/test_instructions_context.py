"""Project instructions in every context the Agent builds, whatever the backend: an
AGENTS.md rule is still there after 30 turns in an 8K window (every registered backend,
the scripted model where a backend's memory calls one, the real MiniLM); a nested
AGENTS.md comes first for its folder; a change on disk is seen on the next turn; over
the room they are reported, never cut."""

from __future__ import annotations

import pytest

from memory.backends import BUILTINS
from memory.turn.instructions import Instructions

WINDOW = 8192
RULE = "RULE-7: in this repository never call print(); use the logging module."
NESTED = "RULE-APP: code under app/ raises AppError, never a bare Exception."
ANSWER = " ".join(f"token{n}" for n in range(220))  # 30 of them pass the 8K window


def _window(agent, monkeypatch, window: int = WINDOW) -> None:
    monkeypatch.setattr(agent.llm, "context_window", lambda: window)


@pytest.mark.parametrize("name", sorted(BUILTINS))
async def test_an_agents_rule_survives_30_turns_in_an_8k_window(name, make_agent, script,
                                                                  monkeypatch):
    assert len(BUILTINS) == 12
    script.default = ANSWER
    script.piece_words = 64  # the same answer, streamed in 4 pieces rather than 220
    agent = make_agent(name, max_answer_tokens=256)
    _window(agent, monkeypatch)
    root = agent.repo.root
    (root / "AGENTS.md").write_text(RULE + "\n")
    (root / "app" / "AGENTS.md").write_text(NESTED + "\n")
    topics = ("the database migration", "the login form", "the users table",
              "validation errors", "the connection pool")
    for n in range(30):
        turn = await agent.ask(f"Question {n}: how should we change {topics[n % 5]} "
                               f"in app/db.py? Think about case {n}.")
        assert turn.ok, turn.error
    pack = agent.last_pack
    system = pack.to_messages()[0]["content"]
    assert RULE in system
    sources = [s.source for s in pack.sections if s.kind == "instructions"]
    assert "instructions:AGENTS.md" in sources
    assert all(s.pinned for s in pack.sections if s.kind == "instructions")
    assert agent.placed.over == 0
    assert pack.tokens <= WINDOW - 256  # the window's fit left them whole and in the window
    assert agent.turns[-1].meta["instructions"]["files"][-1] == "AGENTS.md"
    if any(s.source.startswith("app/") for s in pack.sections if s.kind == "repo"):
        assert sources.index("instructions:app/AGENTS.md") < sources.index(
            "instructions:AGENTS.md")  # the nearer file first
        assert system.index(NESTED) < system.index(RULE)
    if name != "empty":  # the memory really was under pressure: not everything fits
        said = sum(agent.llm.count_tokens(t.user + t.assistant) for t in agent.turns)
        assert said > WINDOW


async def test_a_nested_agents_md_wins_in_its_folder(make_agent, script, monkeypatch):
    agent = make_agent("empty")
    root = agent.repo.root
    (root / "AGENTS.md").write_text("Use spaces for indentation.\n")
    (root / "app" / "AGENTS.md").write_text("In app/ use tabs for indentation.\n")
    pack = await agent.context("apply schema migrations in app/db.py")
    assert any(s.source.startswith("app/") for s in pack.of_kind("repo"))
    files = [s.source for s in pack.of_kind("instructions")]
    assert files == ["instructions:app/AGENTS.md", "instructions:AGENTS.md"]
    assert "nearer one wins" in pack.to_messages()[0]["content"]
    # a context that cites nothing in app/ sees only the root's file
    bare = make_agent("empty", repo=False)
    bare.root = root
    pack = await bare.context("hello")
    assert [s.source for s in pack.of_kind("instructions")] == ["instructions:AGENTS.md"]
    # the developer's open edit brings its folder's file in without any code section
    bare.focus = lambda: ["app/forms.py"]
    pack = await bare.context("hello")
    assert pack.of_kind("instructions")[0].source == "instructions:app/AGENTS.md"


async def test_a_change_on_disk_is_seen_on_the_next_turn(make_agent, script):
    agent = make_agent("full")
    rules = agent.repo.root / ".engram" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Answer in English.\n")
    await agent.ask("first question")
    assert "Answer in English." in agent.last_pack.to_messages()[0]["content"]
    (rules / "style.md").write_text("Answer in French from now on.\n")
    (agent.repo.root / "CLAUDE.md").write_text("Keep functions short.\n")
    await agent.ask("second question")
    system = agent.last_pack.to_messages()[0]["content"]
    assert "Answer in French from now on." in system and "Answer in English." not in system
    assert "Keep functions short." in system
    assert script.calls[-1][0]["content"] == system  # what the model was sent


async def test_over_the_room_they_are_reported_never_cut(make_agent, script, monkeypatch):
    agent = make_agent("full")
    _window(agent, monkeypatch, 2048)
    words = " ".join(f"rule{n}" for n in range(3000))
    (agent.repo.root / "AGENTS.md").write_text(f"BEGIN {words} END\n")
    turn = await agent.ask("what now?")
    system = agent.last_pack.to_messages()[0]["content"]
    assert f"BEGIN {words} END" in system  # whole
    assert agent.placed.over > 0
    assert turn.meta["instructions"]["over"] == agent.placed.over
    assert "over budget" in agent.placed.note()
    assert not agent.last_pack.of_kind("history") and not agent.last_pack.of_kind("repo")


def test_the_agent_and_the_loader_agree_on_the_files(make_agent, script):
    agent = make_agent("empty")
    (agent.repo.root / "AGENTS.md").write_text("x\n")
    loader = agent.instructions()
    assert isinstance(loader, Instructions)
    assert [i.file for i in loader.applying()] == ["AGENTS.md"]


@pytest.mark.slow
async def test_the_embedded_model_is_sent_the_rule_after_turns(make_agent):
    """Through the real embedded SmolLM2: the rule is in every prompt it gets."""
    agent = make_agent("rag", model="local/smollm2", max_answer_tokens=48)
    (agent.repo.root / "AGENTS.md").write_text(RULE + "\n")
    for query in ("What does migrate do?", "How is the login form validated?",
                  "Which table does migrate create?"):
        turn = await agent.ask(query)
        assert turn.ok, turn.error
        assert turn.assistant.strip()
        assert RULE in agent.last_pack.to_messages()[0]["content"]
        assert agent.placed.files == ("AGENTS.md",) or agent.placed.files[-1] == "AGENTS.md"
        assert agent.placed.over == 0
