"""cards end to end: a real embedded-model conversation, the memories command, staleness,
experience across sessions and the regression alarm."""

from __future__ import annotations

import json

import pytest

from memory.backends import registry
from memory.backends.cards.graph import ContextGraph, Node
from memory.types import Turn
from tests.memory.cards_support import (
    CONNECT_5,
    CONNECT_10,
    FORMS_RULE,
    conversation,
    facts,
    said_in_turns,
)

REAL_TURNS = [
    "The connect function in app/db.py must use a timeout of 5 seconds.",
    "validate_input in app/forms.py must reject strings made only of spaces.",
    "Actually, the connect function must use a timeout of 10 seconds instead.",
    "render_form must escape HTML in field values.",
]


@pytest.mark.slow
async def test_real_embedded_model_builds_a_graph_and_packs_cards(make_agent):
    """SmolLM2 under the schema grammar extracts the facts of the lines the reading does
    not place (``cards_facts=read``: "the connect function" is a word, not a name); the
    proxy packs them."""
    from memory.transcript import read_transcript

    agent = make_agent("cards", model="local/smollm2", max_answer_tokens=24)
    for query in REAL_TURNS:
        result = await agent.ask(query)
        assert result.ok, result.error
    records = read_transcript(agent.transcript.path).of_type("memory")
    print("memory ops:", [(r["op"], r["text"][:70]) for r in records])
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    stats = agent.llm.stats
    assert stats.grammar == stats.calls >= 1 and stats.parsed == stats.calls
    graph = agent.backend.graph
    facts = graph.of_type("fact")
    assert len(facts) >= 3, [f.content for f in facts]
    assert any(f.locations for f in facts), [(f.content, f.locations) for f in facts]
    pack = await agent.context("What timeout does connect use?")
    cards = agent.backend.last_pack.cards
    assert cards and all(agent.backend.last_pack.audits[c.node_id].ok for c in cards)
    text = "\n".join(s.text for s in pack.sections)
    if any(not f.current for f in facts):  # the revision was recognised
        assert "timeout of 5 seconds" not in text
    await agent.end_session()  # the session's summary, chosen among its own facts
    records = read_transcript(agent.transcript.path).of_type("memory")
    assert records[-1]["op"] == "REMEMBER", records[-3:]
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    [exp] = agent.backend.store.load()
    from memory.backends.cards.experience import session_facts

    # chosen among what the session left standing: its current facts and the code it wrote
    assert exp.decisions and set(exp.decisions) <= set(session_facts(graph))
    assert any(d in {f.content for f in facts if f.current} for d in exp.decisions)


def test_memories_command_lists_nodes_edges_and_superseded_facts(demo_repo, tmp_path, script,
                                                                  monkeypatch, capsys):
    import sys

    from tui.cli import main

    script.push("answer one", facts((CONNECT_5, "app/db.py::connect")),
                "answer two", facts((CONNECT_10, "app/db.py::connect")))
    monkeypatch.setattr(sys, "stdin", iter([f"{CONNECT_5}\n", f"{CONNECT_10}\n"]))
    data = str(tmp_path / "data")
    assert main(["chat", "--headless", "--repo", str(demo_repo), "--model", "scripted/t",
                 "--backend", "cards", "--data-dir", data]) == 0
    capsys.readouterr()
    assert main(["memories", "--repo", str(demo_repo), "--backend", "cards",
                 "--data-dir", data]) == 0
    out = capsys.readouterr().out
    current, superseded = out.split("superseded (history")
    assert "1 superseded" in out and "fact:1:0" in current and CONNECT_10 in current
    assert "fact:1:0 -conflict-> fact:0:0" in current
    assert "fact:0:0 -contains-> sym:app/db.py::connect" in current
    assert CONNECT_5 in superseded and "revised by fact:1:0" in superseded


async def test_a_plain_word_naming_a_repository_function_is_the_subject(cards_env, script):
    cards = registry.create("cards", cards_env())
    script.push(facts((CONNECT_5, "app/db.py::connect")), facts((CONNECT_10,)))
    await cards.observe(Turn(0, CONNECT_5, "ok"))
    await cards.observe(Turn(1, CONNECT_10, "ok"))  # no location given by the extractor
    new = cards.graph.nodes["fact:1:0"]
    assert new.subject == "app/db.py::connect" and new.locations == ["app/db.py::connect"]
    assert cards.graph.nodes["fact:0:0"].superseded_by == new.id



async def test_statements_are_kept_as_said_without_a_call(cards_env, script):
    """``cards_facts=said``: no extraction call (an answer queued for one stays unread);
    each line is a fact as the developer said it (whole, questions cut off, code, pasted
    traceback or test output and lines of fewer than three words left out, repeats
    dropped, at most 12), located by the names it mentions or by the question it
    followed, and a later one revises it as with extracted facts."""
    cards = registry.create("cards", cards_env(cards_facts="said"))
    script.push(facts(("Nothing of this is used.",)))
    await cards.observe(Turn(0, f"What does connect return? {CONNECT_5}", "ok"))
    await cards.observe(Turn(1, CONNECT_10, "ok"))
    assert len(script.queue) == 1 and cards.env.llm.stats.calls == 0
    first, second = cards.graph.nodes["fact:0:0"], cards.graph.nodes["fact:1:0"]
    assert first.content == CONNECT_5 and second.content == CONNECT_10
    assert first.locations == second.locations == ["app/db.py::connect"]
    assert first.superseded_by == second.id
    assert cards.settings()["facts"] == "said"
    rule = f"{FORMS_RULE} It raises ValueError then, naming the field."
    await cards.observe(Turn(2, f"{rule}\nThanks.\n```python\nx = 1\n```", "ok"))
    assert [n.content for n in cards.graph.current() if n.id.startswith("fact:2:")] == [rule]
    long = "render_form in app/forms.py has to escape " + "each field value, " * 20 + "always."
    await cards.observe(Turn(3, long, "ok"))  # one sentence longer than an extracted fact
    assert [n.content for n in cards.graph.current() if n.id.startswith("fact:3:")] == [long]
    pasted = ("Failing:\nTraceback (most recent call last):\n"
              '  File "app/db.py", line 6, in connect\n    open_db(url)\n'
              "ValueError: no url given\nFAILED tests/test_db.py::test_connect - ValueError\n"
              "What about `migrate`? It must stop at the first failure.\n"
              "it must stop at the first  failure\n")
    await cards.observe(Turn(4, pasted, "ok"))
    said = [n for n in cards.graph.current() if n.id.startswith("fact:4:")]
    assert [n.content for n in said] == ["It must stop at the first failure."]
    assert said[0].subject == "app/db.py::migrate"  # from the question it followed
    assert {n.type for n in cards.graph.current() if n.turn == 4} >= {"failure"}
    many = "\n".join(f"Rule {i}: keep the field number {i} as it is." for i in range(20))
    await cards.observe(Turn(5, many, "ok"))
    assert len([n for n in cards.graph.nodes if n.startswith("fact:5:")]) == 12
    with pytest.raises(ValueError, match="cards_facts"):
        registry.create("cards", cards_env(cards_facts="some"))


async def test_the_extractor_reads_only_the_lines_the_reading_does_not_place(cards_env, script):
    """``cards_facts=read`` (the default): a message whose lines all name a function of
    the repository or of the conversation costs no call, its lines kept as said; in a
    message with a line the reading does not place, the extractor is asked about that
    line only, and the facts keep the order they were said in (a later one of the turn
    may revise an earlier one)."""
    cards = registry.create("cards", cards_env())
    assert cards.settings()["facts"] == "read"
    five, ten = ("`connect` must use a timeout of 5 seconds.",
                 "Actually, `connect` must use a timeout of 10 seconds instead.")
    await cards.observe(Turn(0, f"{five}\nWhat does connect return?", "ok"))
    assert cards.env.llm.stats.calls == 0 and not script.calls
    assert cards.graph.nodes["fact:0:0"].content == five
    unplaced = "All timeouts are given in whole seconds, never as floats."
    script.push(facts((unplaced,)))
    await cards.observe(Turn(1, f"{unplaced}\n{ten}", "ok"))
    prompt = "\n".join(m["content"] for m in script.calls[-1])
    assert unplaced in prompt and "10 seconds" not in prompt and "5 seconds" not in prompt
    assert [n.content for n in cards.graph.nodes.values() if n.id.startswith("fact:1:")] \
        == [unplaced, ten]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:1:1"
    assert cards.graph.nodes["fact:1:1"].locations == ["app/db.py::connect"]
    script.push("not JSON", "still not JSON")  # the extractor fails: the line is kept
    await cards.observe(Turn(2, "Every call logs at debug level, nothing louder.", "ok"))
    kept = [n for n in cards.graph.nodes.values() if n.id.startswith("fact:2:")]
    assert [n.content for n in kept] == ["Every call logs at debug level, nothing louder."]
    with pytest.raises(ValueError, match="cards_facts"):
        registry.create("cards", cards_env(cards_facts="some"))


async def test_a_line_that_only_points_at_code_is_no_statement(cards_env, script):
    """``cards_facts=said``: "(See `a.py::f`.)" states nothing; it locates the statement
    before it when that one names no code, and makes no card of its own."""
    cards = registry.create("cards", cards_env(cards_facts="said"))
    await cards.observe(Turn(0, "The timeout must be 10 seconds, not 5.\n"
                                "(See `app/db.py::connect`.)", "ok"))
    [fact] = [n for n in cards.graph.current() if n.type == "fact"]
    assert fact.content == "The timeout must be 10 seconds, not 5."
    assert fact.subject == "app/db.py::connect"
    await cards.observe(Turn(1, f"{FORMS_RULE}\n(See `app/db.py`, `app/db.py::connect`.)\n"
                                "see also app/db.py", "ok"))
    [rule] = [n for n in cards.graph.current() if n.turn == 1 and n.type == "fact"]
    assert rule.content == FORMS_RULE and "app/db.py::connect" not in rule.locations
    own = ["See app/db.py::connect for the pool size rule.", "`timeout=10` in `connect`.",
           "max_retries = 5", "Never (see `connect`).", "`connect` in `app/db.py`:",
           "`connect` or `migrate`?"]  # each says something of its own, or asks it
    await cards.observe(Turn(2, "\n".join(own), "ok"))
    assert sorted(n.content for n in cards.graph.nodes.values()
                  if n.turn == 2 and n.type == "fact") == sorted(own)
    await cards.observe(Turn(3, "What about `migrate`? It must stop at the first failure.\n"
                                "(See `app/db.py::connect`.)", "ok"))
    [asked] = [n for n in cards.graph.current() if n.turn == 3 and n.type == "fact"]
    assert asked.subject == "app/db.py::migrate"  # from its question, not the pointer

async def test_a_commit_changing_the_function_marks_its_fact_stale(cards_env, script,
                                                                   repo_index):
    from tests.conftest import git

    cards = registry.create("cards", cards_env())
    script.push(facts((CONNECT_5, "app/db.py::connect")),
                facts(("migrate must stop at the first failure.", "app/db.py::migrate")))
    await cards.observe(Turn(0, CONNECT_5, "ok"))
    await cards.observe(Turn(1, "migrate must stop at the first failure.", "ok"))
    root = repo_index.root
    db = (root / "app/db.py").read_text()
    (root / "app/db.py").write_text(db.replace("return (url, timeout)",
                                               "return (url, timeout * 2)"))
    git(root, "commit", "-qam", "connect doubles the timeout")
    sha = git(root, "rev-parse", "HEAD").strip()
    script.push(facts())
    await cards.observe(Turn(2, "thanks", "ok"))
    connect, migrate = cards.graph.nodes["fact:0:0"], cards.graph.nodes["fact:1:0"]
    assert connect.stale == f"app/db.py::connect changed in {sha[:8]}"
    assert migrate.stale == ""  # same file, another function: re-validated
    assert any(r["op"] == "STALE" and r["id"] == "fact:0:0" for r in cards.drain_records())
    await cards.context("connect timeout", budget=3000)
    [card] = [c for c in cards.last_pack.cards if c.node_id == "fact:0:0"]
    assert "STALE: app/db.py::connect changed in" in card.render()


def env_for(cards_env, session_id, **options):
    from dataclasses import replace

    return replace(cards_env(**options), session_id=session_id)


async def test_a_fact_of_session_one_reaches_session_two_free_and_pinned(cards_env, script):
    from memory.backends.cards.experience import ExperienceStore

    first = registry.create("cards", env_for(cards_env, "s1", cards_facts="llm"))
    await conversation(first, script)
    script.push(json.dumps({"decisions": [CONNECT_10], "summary": "Set connect's timeout."}))
    exp = await first.remember()
    assert exp is not None and exp.decisions == [CONNECT_10]
    assert [r["op"] for r in first.drain_records()][-1] == "REMEMBER"
    second = registry.create("cards", env_for(cards_env, "s2"))
    node = second.graph.nodes["exp:s1"]
    assert node.type == "summary" and CONNECT_10 in node.content
    # free reuse: retrieved like any unit when the query is about it
    free = await second.context("what timeout does connect use", budget=3000)
    assert any(CONNECT_10 in s.text for s in free.sections)
    # oracle reuse: pinned, it reaches every context before anything else
    one = registry.create("cards", env_for(cards_env, "s2", cards_max=1))
    unpinned = await one.context("validate_input blank strings", budget=3000)
    assert [s.source for s in unpinned.sections] != ["exp:s1"]
    digest = one.state_digest()
    assert one.pin_experience("s1").session == "s1"
    assert one.state_digest() != digest
    pinned = await one.context("validate_input blank strings", budget=3000)
    assert [s.source for s in pinned.sections] == ["exp:s1"]
    with pytest.raises(LookupError, match="no session summary 'zz'"):
        one.pin_experience("zz")
    # its own session is not loaded as experience
    again = registry.create("cards", env_for(cards_env, "s1"))
    assert "exp:s1" not in again.graph.nodes
    assert len(ExperienceStore(cards_env().data_dir).load()) == 1


async def test_context_leaves_the_digest_alone_with_experience(cards_env, script):
    first = registry.create("cards", env_for(cards_env, "s1", cards_facts="llm"))
    await conversation(first, script)
    script.push("not JSON", "still not JSON")  # the summary falls back to the facts
    exp = await first.remember()
    assert exp is not None and CONNECT_10 in exp.decisions
    assert [r["op"] for r in first.drain_records()][-2:] == ["skipped", "REMEMBER"]
    second = registry.create("cards", env_for(cards_env, "s2"))
    digest = second.state_digest()
    await second.context("connect timeout", budget=3000)
    assert second.state_digest() == digest


def test_a_torn_or_corrupt_experience_line_is_skipped(tmp_path):
    from memory.backends.cards.experience import Experience, ExperienceStore

    store = ExperienceStore(tmp_path)
    store.save(Experience("a", 1.0, "first", ["x must hold."]))
    with store.path.open("a") as f:
        f.write('{"session": "b", "created": "yesterday"}\n{"session": "c", "summ')
    store.save(Experience("d", 2.0, "token sk-abcdefghijklmnopqrstuvwxyz123456 seen", []))
    loaded = store.load()
    assert [e.session for e in loaded] == ["a", "d"] and store.corrupt == 2
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in store.path.read_text()


async def test_code_that_breaks_a_stated_decision_raises_its_card(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = ["`connect` takes (host).", "`connect` takes (host, port, timeout).",
            "`connect` should reuse `Form` from `app/forms.py`.",
            "For `connect`: never raises KeyError for a bad host."]
    await said_in_turns(cards, script, said)
    wrong = "```python\ndef connect(host):\n    return {}[host]\n```"
    right = ("```python\ndef connect(host, port, timeout):\n    form = Form()\n"
             "    return form, port, timeout\n```")
    script.push(facts())
    await cards.observe(Turn(4, "write connect", wrong))
    graph = cards.graph
    takes, reuse, never = (graph.nodes[f"fact:{i}:0"] for i in (1, 2, 3))
    assert takes.alarm == ("the code written at turn 4 takes (host), as turn:0 said before "
                           "this revision")
    assert reuse.alarm == "the code written at turn 4 does not use `Form`"
    assert never.alarm == ""  # a KeyError from {}[host] is not a `raise`: nothing to say
    ops = [r["op"] for r in cards.drain_records()]
    assert ops.count("ALARM") == 2
    pack_ = await cards.context("render_form escapes HTML", budget=3000)
    first = pack_.of_kind("memory")[0]
    assert "ALARM: the code written at turn 4 takes (host)" in first.text
    script.push(facts())
    await cards.observe(Turn(5, "fix connect", right))
    assert not takes.alarm and not reuse.alarm
    assert [r["op"] for r in cards.drain_records()].count("CLEAR") == 2
    pack_ = await cards.context("render_form escapes HTML", budget=3000)
    assert "ALARM" not in "\n".join(s.text for s in pack_.sections)


@pytest.mark.parametrize(("said", "code", "why"), [
    # annotations with commas, nested defaults and markers: the same signature, no alarm
    ("`load` takes (items: dict[str, int], *, key=(1, 2)).",
     "def load(items: dict[str, int], *, key=(1, 2)):\n    return items", None),
    ("`load` takes (items: dict[str, int], *, key).",
     "def load(items: dict[str, int], *, key):\n    return items", None),
    ("`load` takes (self, /, items, *rest, **opts).",
     "def load(self, /, items, *rest, **opts):\n    return items", None),
    # a nested default hid the list; a comma inside brackets split it
    ("`load` takes (items, key=(1, 2)).", "def load(items):\n    return items",
     "the code written at turn 2 takes (items)"),
    ("`load` takes (items: dict[str, int]).", "def load(items, extra):\n    return items",
     "the code written at turn 2 takes (items, extra)"),
])
def test_the_alarm_reads_a_parameter_list_as_python_does(said, code, why):
    from memory.backends.cards.alarm import check

    graph = ContextGraph()
    graph.add(Node("fact:0:0", "fact", "turn:0", said, 8, subject="load", turn=0))
    node = Node("code:2:0", "code", "turn:2", code, 20, subject="load", turn=2)
    assert [a.why for a in check(graph, node)] == ([why] if why else [])


def test_the_alarm_reads_the_form_of_a_list_said_another_way():
    from memory.backends.cards.alarm import check

    graph = ContextGraph()
    graph.add(Node("fact:0:0", "fact", "turn:0", "I'd have load accept items and a key.", 8,
                   subject="load", turn=0, form="`load` takes (items, key=None)."))
    node = Node("code:2:0", "code", "turn:2", "def load(items):\n    return items", 20,
                subject="load", turn=2)
    assert [a.why for a in check(graph, node)] == ["the code written at turn 2 takes (items)"]


def test_the_alarm_checks_raises_and_ignores_code_that_does_not_parse():
    from memory.backends.cards.alarm import check

    graph = ContextGraph()
    graph.add(Node("fact:0:0", "fact", "turn:0", "For `parse`: Raises ValueError when empty.",
                   8, subject="parse", turn=0))
    graph.add(Node("fact:1:0", "fact", "turn:1", "`parse` must not raise TypeError.", 8,
                   subject="parse", turn=1))
    code = "def parse(text):\n    if not text:\n        raise TypeError('x')\n    return text"
    node = Node("code:2:0", "code", "turn:2", code, 20, subject="parse", turn=2)
    assert [(a.fact.id, a.why) for a in check(graph, node)] == [
        ("fact:0:0", "the code written at turn 2 never raises ValueError"),
        ("fact:1:0", "the code written at turn 2 raises TypeError")]
    broken = Node("code:3:0", "code", "turn:3", "def parse(text:\n", 5, subject="parse")
    assert check(graph, broken) == []
