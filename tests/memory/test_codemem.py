"""The codemem backend through the Agent: judge, selector, session memory, detector."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory.transcript import read_transcript

V1 = '''def create_user(name, age):
    return {"name": name, "age": age}'''
V2 = '''def create_user(name, age):
    if not name:
        raise ValueError("name required")
    return {"name": name, "age": age}'''
V3 = '''def create_user(name, age):
    if not name:
        raise ValueError("name required")
    age = int(age)
    return {"name": name, "age": age}'''
V4 = '''def create_user(name, age):
    return {"name": name, "age": int(age)}'''
V6 = '''def create_user(name, age):
    if not name:
        raise ValueError("the name must not be empty")
    age = int(age)
    return {"name": name, "age": age}'''

TURNS = [
    ("Write a function create_user(name, age) that returns a dict with both.", V1),
    ("Reject empty names in create_user by raising ValueError.", V2),
    ("What does the repository's connect function do?",
     "It opens a connection to the postgres database and returns it."),
    ("Store the age as an integer in create_user.", V3),
    ("Simplify create_user so it is one short return statement.", V4),
    ("Reject empty names in create_user by raising a ValueError.", V6),
]
REGENERATED = V3  # the regeneration keeps the guard (and the rest)


def fenced(code: str) -> str:
    return f"Here it is:\n```python\n{code}\n```"


class Router:
    """Scripted replies by role of the call: judge, notes, answers, regeneration."""

    def __init__(self, judge: Any = '{"decision": "KEEP", "targets": []}') -> None:
        self.judge = judge
        self.answers = {user: (reply if "def " not in reply else fenced(reply))
                        for user, reply in TURNS}
        self.kinds: list[str] = []

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system = messages[0]["content"]
        last = messages[-1]["content"]
        if system.startswith("You manage the code context"):
            self.kinds.append("judge")
            return self.judge(messages) if callable(self.judge) else self.judge
        if system.startswith("You help a coding assistant continue"):
            self.kinds.append("modify")
            return "Change the function as asked."
        if system.startswith("You keep the change log"):
            self.kinds.append("summary")
            return "The function was changed."
        if last.startswith("Your code for"):
            self.kinds.append("regenerate")
            return fenced(REGENERATED)
        self.kinds.append("answer")
        return self.answers.get(last, "I cannot help with that.")


async def test_detector_flags_the_removed_guard_and_regenerates_once(make_agent, script):
    router = Router()
    script.default = router
    agent = make_agent("codemem", max_answer_tokens=256)
    backend = agent.backend
    turns = []
    for user, _ in TURNS:
        turns.append(await agent.ask(user))
        assert turns[-1].ok, turns[-1].error

    # turn 5 (index 4) removes the guard turn 2 added under a dissimilar instruction
    flagged = turns[4].meta["codemem"]
    assert flagged["regenerated"] is True and flagged["function"] == "create_user"
    undone = {c["turn"]: c["undone"] for c in flagged["conflicts"]}
    assert undone[1] == ['if not name: raise ValueError("name required")']
    assert turns[4].assistant == fenced(REGENERATED)
    assert flagged["first_answer"] == fenced(V4)
    assert router.kinds.count("regenerate") == 1

    # turn 6 refines turn 2's instruction (similarity >= 0.95): no conflict, and linked
    assert "codemem" not in turns[5].meta
    blocks = backend.session.blocks
    assert [b.turn for b in blocks] == [0, 1, 3, 4, 5]  # turn 3 (index 2) has no code
    assert blocks[-1].links == [1]
    assert blocks[-1].diff.removed == ('if not name: raise ValueError("name required")',)

    records = [r.data for r in read_transcript(agent.transcript.path).records]
    conflicts = [r for r in records if r.get("op") == "conflict"]
    assert len(conflicts) == 1 and conflicts[0]["regenerated"] and conflicts[0]["remaining"] == []
    recorded = [r for r in records if r["type"] == "turn"]
    assert recorded[4]["meta"]["codemem"]["regenerated"] is True
    assert recorded[4]["assistant"] == fenced(REGENERATED)


async def test_session_memory_in_the_context_with_a_modification_note(make_agent, script):
    script.default = Router()
    agent = make_agent("codemem", max_answer_tokens=256)
    for user, _ in TURNS[:2]:
        await agent.ask(user)
    pack = await agent.context("Also reject names longer than 40 characters in create_user.")
    texts = {s.source: s.text for s in pack.sections}
    assert 'raise ValueError("name required")' in texts["codemem:create_user#1"]
    assert texts["codemem:note:create_user"].endswith("Change the function as asked.")
    assert "2. Reject empty names" in texts["codemem:instructions"]


async def _agent_with_memory(make_agent: Any, script: Any, router: Router) -> Any:
    script.default = router
    agent = make_agent("codemem")
    # the first round finds memory empty: the next BM25 hits are added without asking
    await agent.ask("How does validate_input check an email address?")
    assert router.kinds.count("judge") == 0
    assert agent.backend.context_memory
    return agent


async def test_keep_changes_nothing(make_agent, script):
    router = Router('{"decision": "KEEP", "targets": []}')
    agent = await _agent_with_memory(make_agent, script, router)
    before, digest = list(agent.backend.context_memory), agent.backend.state_digest()
    pack = await agent.context("How are database migrations applied?")
    assert agent.backend.state_digest() == digest
    assert [s.source for s in pack.of_kind("repo")] == before
    await agent.ask("How are database migrations applied?")
    assert list(agent.backend.context_memory) == before
    assert router.kinds.count("judge") == 2


async def test_add_merges_the_next_bm25_blocks(make_agent, script):
    router = Router('{"decision": "ADD", "targets": ["migrate"]}')
    agent = await _agent_with_memory(make_agent, script, router)
    before = list(agent.backend.context_memory)
    digest = agent.backend.state_digest()
    pack = await agent.context("How are database migrations applied in migrate?")
    shown = [s.source for s in pack.of_kind("repo")]
    assert agent.backend.state_digest() == digest  # proposed, not applied
    assert "app/db.py::migrate" in shown and shown[:len(before)] == before
    await agent.ask("How are database migrations applied in migrate?")
    after = list(agent.backend.context_memory)
    assert after[:len(before)] == before and "app/db.py::migrate" in after
    assert len(after) > len(before) and agent.backend.state_digest() != digest


async def test_malformed_judge_output_keeps_memory_and_loses_no_turn(make_agent, script):
    router = Router("I would ADD something, probably")
    agent = await _agent_with_memory(make_agent, script, router)
    before = list(agent.backend.context_memory)
    turn = await agent.ask("And what does render_form return?")
    assert turn.ok and len(agent.turns) == 2
    assert list(agent.backend.context_memory) == before
    records = [r.data for r in read_transcript(agent.transcript.path).records]
    skipped = [r for r in records if r.get("op") == "skipped"]
    assert skipped and "judge output unusable" in skipped[0]["text"]


async def test_selector_drops_blocks_the_generated_code_does_not_use(make_agent, script):
    router = Router('{"decision": "ADD", "targets": ["connect", "migrate"]}')
    agent = await _agent_with_memory(make_agent, script, router)
    router.answers["Check a signup, then connect and migrate."] = fenced(
        "def check_signup(form, email):\n    return form.validate_input(email)")
    pack = await agent.context("Check a signup, then connect and migrate.")
    offered = [s.source for s in pack.of_kind("repo")]
    assert {"app/db.py::connect", "app/forms.py::Form.validate_input"} <= set(offered)
    await agent.ask("Check a signup, then connect and migrate.")
    using = {"app/forms.py::Form.validate_input", "app/forms.py::Form"}  # the class has it too
    assert list(agent.backend.context_memory) == [loc for loc in offered if loc in using]
    dropped = [loc for op, loc in agent.backend.last_events if op == "DROP"]
    assert dropped == [loc for loc in offered if loc not in using]


async def test_memory_calls_count_as_memory_usage_at_temperature_zero(make_agent, script):
    router = Router()
    script.default = router
    agent = make_agent("codemem", max_answer_tokens=256)
    for user, _ in TURNS[:2]:
        await agent.ask(user)
    assert agent.llm.ledger.get("memory").calls == router.kinds.count("judge") + \
        router.kinds.count("modify") + router.kinds.count("summary")
    assert router.kinds.count("summary") == 2


def test_conflict_record_is_json():
    from memory.backends.codemem.session import Conflict

    conflict = Conflict(1, 1, "guard", ("if x: pass",), ())
    assert json.loads(json.dumps(conflict.to_dict()))["undone"] == ["if x: pass"]


@pytest.mark.slow
async def test_real_embedded_model_runs_codemem(make_agent):
    agent = make_agent("codemem", model="local/smollm2", max_answer_tokens=48, max_tokens=64)
    for query in ["Write a function add(a, b) in Python that returns their sum.",
                  "Make add reject None arguments.",
                  "How does migrate apply the steps?"]:
        turn = await agent.ask(query)
        assert turn.ok, turn.error
    assert agent.llm.ledger.get("memory").calls >= 1
    records = read_transcript(agent.transcript.path).of_type("memory")
    assert not [r for r in records if r["op"] == "skipped"]
    # the ADD/KEEP judge, on rounds with a memory to judge, parses under the grammar
    backend = agent.backend
    if not backend.context_memory:  # the AST selector may have pruned it all
        from memory.backends.codemem.context import retrieve_new

        backend.context_memory = {b.location: b for b in retrieve_new(
            agent.repo, "connect to the database and migrate", set())}
    for query in ["Make connect retry three times.", "Rename render_form to form_html.",
                  "What does validate_input reject?"]:
        proposal = await backend.judge(query)
        assert proposal.decision in ("ADD", "KEEP") and "unusable" not in proposal.reason
    stats = agent.llm.stats
    assert stats.calls >= 3 and stats.parsed == stats.calls == stats.grammar
    pack = await agent.context("What does connect do?")
    assert pack.sections[0].kind == "system"


async def test_uncommitted_code_turn_with_a_conflict_changes_no_state(make_agent, script):
    router = Router()
    script.default = router
    agent = make_agent("codemem", max_answer_tokens=256)
    for user, _ in TURNS[:2]:
        await agent.ask(user)
    digest, blocks = agent.backend.state_digest(), len(agent.backend.session)
    turn = await agent.ask(TURNS[4][0], commit=False)  # removes the guard: regenerated
    assert turn.meta["codemem"]["regenerated"] is True
    assert agent.backend.state_digest() == digest and len(agent.backend.session) == blocks
    assert len(agent.turns) == 2


def test_memories_command_rebuilds_codemem_from_the_transcript(demo_repo, tmp_path, script,
                                                              monkeypatch, capsys):
    import sys

    from tui.cli import main

    script.default = Router()
    monkeypatch.setattr(sys, "stdin", iter([f"{user}\n" for user, _ in TURNS[:3]]))
    data = str(tmp_path / "data")
    assert main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "codemem", "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["memories", "--repo", str(demo_repo), "--backend", "codemem",
                 "--data-dir", data]) == 0
    out = capsys.readouterr().out
    assert "2 code session blocks" in out
    assert "create_user#1: The function was changed." in out
    assert "code context memory:" in out and "app/db.py::connect" in out
    # a session where codemem never ran says so instead of listing nothing
    monkeypatch.setattr(sys, "stdin", iter(["hello\n"]))
    assert main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "full", "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["memories", "--repo", str(demo_repo), "--backend", "codemem",
                 "--data-dir", data]) == 2
    assert "codemem never ran in this session" in capsys.readouterr().err


def test_models_command_lists_the_embedded_model():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "tui.cli", "models"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0
    assert "local/smollm2" in result.stdout and "installed" in result.stdout
    assert "default model:" in result.stdout
