from __future__ import annotations

import json

import pytest

from memory.backends import BackendEnv, registry
from memory.backends._cards_build import failures
from memory.backends._cards_graph import ContextGraph, Node
from memory.backends._cards_pack import ACTION_VERBS, Unit, audit, compile_card, pack
from memory.backends._cards_score import (
    BACKGROUND,
    Candidate,
    Judgment,
    LLMScorer,
    ProxyScorer,
    cost_penalty,
    utility,
)
from memory.backends._cards_text import card_fields
from memory.llm import LLM, LLMConfig
from memory.repo import RepoIndex
from memory.store import Store
from memory.types import Turn
from tests.conftest import DB, FORMS, make_repo


def facts(*items):
    return json.dumps({"facts": [{"text": t, "locations": list(loc)} for t, *loc in items]})


@pytest.fixture
def repo_index(tmp_path, embedder):
    root = make_repo(tmp_path / "repo", {"app/forms.py": FORMS, "app/db.py": DB})
    index = RepoIndex(root, Store(tmp_path / "data" / "index.lance"), embedder)
    index.refresh()
    return index


@pytest.fixture
def cards_env(tmp_path, embedder, repo_index, script):
    def build(**options):
        return BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                          repo=repo_index, data_dir=tmp_path / "home", session_id="s1",
                          options=options)
    return build


CONNECT_5 = "The connect function in app/db.py must use a timeout of 5 seconds."
CONNECT_10 = "Actually, the connect function must use a timeout of 10 seconds instead."
FORMS_RULE = "validate_input must reject strings made only of spaces."


async def conversation(backend, script):
    script.push(facts((CONNECT_5, "app/db.py::connect")))
    await backend.observe(Turn(0, CONNECT_5, "Noted."))
    script.push(facts((FORMS_RULE, "app/forms.py::Form.validate_input")))
    await backend.observe(Turn(1, FORMS_RULE, "```python\ndef validate_input(self, value):\n"
                                             "    if not value.strip():\n"
                                             "        raise ValueError('empty')\n"
                                             "    return True\n```"))
    script.push(facts((CONNECT_10, "app/db.py::connect")))
    await backend.observe(Turn(2, CONNECT_10, "OK, 10 seconds."))


async def test_a_revised_requirement_supersedes_the_old_one(cards_env, script):
    cards = registry.create("cards", cards_env())
    await conversation(cards, script)
    graph = cards.graph
    old, new = graph.nodes["fact:0:0"], graph.nodes["fact:2:0"]
    assert not old.current and old.superseded_by == new.id and new.current
    assert [(e.src, e.dst) for e in graph.edges if e.kind == "conflict"] == [(new.id, old.id)]
    assert old in graph.superseded() and old.content == CONNECT_5  # kept in history
    assert graph.nodes["fact:1:0"].current  # another subject is untouched


def test_a_slot_is_the_statement_with_its_values_masked():
    from memory.backends._cards_graph import slot

    assert slot("`connect` belongs in `app/db.py`.") == slot("- `connect` belongs in `app/x.py`")
    assert slot("`connect` takes (host).") == slot("`connect` takes (host, port, timeout).")
    assert slot("connect waits 5 seconds.") == slot("connect waits 10 seconds.")
    assert slot("`connect` takes (host).") != slot("`connect` belongs in `app/db.py`.")
    # predicates that hold several values: a second dependency adds to the first
    assert slot("`connect` needs `socket` from `socket`.") != \
        slot("`connect` needs `ssl` from `ssl`.")
    assert slot("`connect` needs `ssl` from `a.py`.") == slot("`connect` needs `ssl` from `b.py`.")


async def test_the_same_slot_with_another_value_supersedes_without_a_cue(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = ["`connect` belongs in `app/forms.py`.", "`connect` needs `time` from `time`.",
            "`connect` belongs in `app/db.py`.", "`connect` needs `socket` from `socket`."]
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"  # the location


async def said_in_turns(cards, script, said):
    for i, text in enumerate(said):
        script.push(facts((text,)))
        await cards.observe(Turn(i, text, "Noted."))
    return [n.content for n in cards.graph.current() if n.type == "fact"]


async def test_two_dependencies_in_similar_words_both_stay(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = ["`connect` needs `Decimal` from the `decimal` module.",
            "`connect` needs `InvalidOperation` from the `decimal` module.",
            "`connect` should reuse `Form` from `app/forms.py`."]
    assert await said_in_turns(cards, script, said) == said


async def test_a_retraction_is_revised_when_the_claim_is_said_again(cards_env, script):
    cards = registry.create("cards", cards_env())
    rule = "For `connect`: retry twice when the server does not answer, then give up."
    said = ["`connect` belongs in `app/db.py`.",
            f"Scratch that for `connect`: the opposite holds. Not: {rule.split(': ', 1)[1]}",
            "For `connect`: log every failed attempt.", rule]
    current = await said_in_turns(cards, script, said)
    # the retraction touched no unrelated statement, and the rule said again revised it
    assert current == [said[0], said[2], rule]
    assert cards.graph.nodes["fact:1:0"].superseded_by == "fact:3:0"


async def test_a_provisional_statement_is_replaced_by_the_next_of_its_predicate(cards_env,
                                                                                script):
    """"For a first version" says a statement holds only for a while: the next statement
    of the same predicate about the function replaces it; other predicates, another
    function and a dependency (several at once) do not."""
    cards = registry.create("cards", cards_env())
    said = ["`connect` should, for a first version, only check its input and return None.",
            "`connect` takes (url, timeout).",
            "`connect` should reuse `Form` from `app/forms.py`.",
            "`validate_input` should reject empty strings.",
            "`connect` should open a socket to the url and return it, or raise after the "
            "timeout."]
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:4:0"
    # not provisional: a temporary file; too far apart: support http / log each retry
    cards = registry.create("cards", cards_env())
    said = ["`save` should write to a temporary file and rename it.",
            "`connect` should, for now, only support http.",
            "`save` should return the path it wrote.", "`connect` should log each retry."]
    assert await said_in_turns(cards, script, said) == said


async def test_questions_in_a_fact_are_cut_off_and_lend_it_their_subject(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = "How is `connect` organised? A short overview is enough."
    script.push(facts((said,), ("Where does it live?",)))
    await cards.observe(Turn(0, said, "Noted."))
    (fact,) = [n for n in cards.graph.current() if n.type == "fact"]
    assert fact.content == "A short overview is enough."
    assert fact.subject == "app/db.py::connect"


async def test_a_quoted_retraction_retracts_only_a_near_repeat_of_its_quote(cards_env,
                                                                            script):
    """"Not: X" names what it retracts: a statement that only shares X's words (here the
    doctest style, cosine 0.79) stays; saying X later revises the retraction."""
    cards = registry.create("cards", cards_env())
    rule = ('>>> connect("db://y", retries=2) <Connection db://y> At most *retries* attempts '
            'are made.')
    said = ['`connect` should: open a connection to *url* and return it. >>> connect("db://x")'
            ' <Connection db://x>',
            f"Scratch that for `connect`: the opposite holds. Not: {rule}",
            f"For `connect`: {rule}"]
    assert await said_in_turns(cards, script, said) == [said[0], said[2]]
    assert cards.graph.nodes["fact:1:0"].superseded_by == "fact:2:0"


async def test_a_correction_with_a_colon_states_the_new_value(cards_env, script):
    """"Correction: X" replaces (cosine 0.79 here, a paraphrase); "Not: X" retracts a
    statement saying X after its lead."""
    cards = registry.create("cards", cards_env())
    said = ["`load` should return None for a missing id.",
            "Correction: `load` should raise KeyError on a missing id.",
            "For `connect`: None when empty.",
            "Scratch that for `connect`: the opposite holds. Not: None when empty."]
    assert await said_in_turns(cards, script, said) == [said[1], said[3]]


async def test_a_short_rule_said_again_after_its_lead_revises_the_retraction(cards_env,
                                                                             script):
    """"For `connect`: X" says again the X a retraction quoted: compared without its lead
    (the whole statement is only 0.45 from a three-word X)."""
    cards = registry.create("cards", cards_env())
    said = ["Scratch that for `connect`: the opposite holds. Not: None when empty.",
            "For `connect`: None when empty."]
    assert await said_in_turns(cards, script, said) == [said[1]]


async def test_a_statement_too_long_for_one_fact_is_kept_whole(cards_env, script):
    """The extraction schema bounds a fact at 300 characters: a longer requirement the
    extractor took nothing from is kept as said; one it took a piece of is not doubled."""
    cards = registry.create("cards", cards_env())
    spec = ("`connect` should: open a connection to *url*, retrying on timeouts. " * 5).strip()
    other = "`validate_input` should: reject empty strings. " + "It must also trim. " * 16
    script.push(facts())  # the extractor keeps nothing
    await cards.observe(Turn(0, f"- {spec}\n- Also short.", "Noted."))
    script.push(facts(("It must also trim.",)))
    await cards.observe(Turn(1, other, "Noted."))
    assert [n.content for n in cards.graph.current() if n.type == "fact"] == [
        spec, "It must also trim."]
    assert cards.graph.nodes["fact:0:0"].subject == "app/db.py::connect"


async def test_locations_resolve_and_code_blocks_become_nodes(cards_env, script):
    cards = registry.create("cards", cards_env())
    await conversation(cards, script)
    graph = cards.graph
    fact = graph.nodes["fact:1:0"]
    assert fact.subject == "app/forms.py::Form.validate_input"
    assert "sym:app/forms.py::Form.validate_input" in graph.nodes
    assert any(e.kind == "contains" and e.src == fact.id
               and e.dst == "sym:app/forms.py::Form.validate_input" for e in graph.edges)
    code = graph.nodes["code:1:0"]
    assert code.type == "code" and code.subject == "validate_input"
    assert code.locations == ["app/forms.py::Form.validate_input"]
    assert any(e.kind == "task" and {e.src, e.dst} == {fact.id, code.id} for e in graph.edges)
    assert graph.nodes["fact:0:0"].subject == "app/db.py::connect"


async def test_a_location_outside_the_repository_is_not_kept(cards_env, script):
    cards = registry.create("cards", cards_env())
    script.push(facts(("Keep ../../etc/passwd out of it.", "../../etc/passwd")))
    await cards.observe(Turn(0, "Keep ../../etc/passwd out of it.", "ok"))
    [fact] = cards.graph.of_type("fact")
    assert fact.locations == []
    assert not any(n.type in ("symbol", "file") for n in cards.graph.nodes.values())


TRACEBACK = """It fails:
Traceback (most recent call last):
  File "app/db.py", line 6, in migrate
    step(conn)
  File "app/steps.py", line 3, in add_column
    raise KeyError(name)
KeyError: 'email'
"""
PYTEST_OUT = """FAILED tests/test_forms.py::test_blank - AssertionError: assert True is False
1 failed, 3 passed"""


def test_failures_are_found_in_tracebacks_and_pytest_output():
    [tb] = failures(TRACEBACK)
    assert tb.error == "KeyError: 'email'"
    assert tb.frames[-1] == ("app/steps.py", 3, "add_column")
    [test] = failures(PYTEST_OUT)
    assert test.test == "tests/test_forms.py::test_blank"
    assert test.error.startswith("AssertionError")
    assert failures("all good, nothing failed here") == []


async def test_failures_become_nodes_tied_to_their_symbol(cards_env, script):
    cards = registry.create("cards", cards_env())
    script.push(facts())
    await cards.observe(Turn(0, TRACEBACK, "The step is missing a guard."))
    [failure] = cards.graph.of_type("failure")
    assert "KeyError: 'email'" in failure.content and failure.source == "turn:0"
    script.push(facts())
    await cards.observe(Turn(1, "Traceback (most recent call last):\n"
                                '  File "app/db.py", line 6, in migrate\n    step(conn)\n'
                                "TypeError: 'NoneType' object is not callable", "ok"))
    second = next(n for n in cards.graph.of_type("failure") if n.turn == 1)
    assert second.subject == "app/db.py::migrate"
    assert any(e.kind == "contains" and e.dst == "sym:app/db.py::migrate"
               for e in cards.graph.edges_of(second.id))


def judgment(shift, necessity, uplift, risk):
    return Judgment("search", "update x", shift, necessity, uplift, risk, "r", 0.7)


def test_signed_weight_aggregation_matches_hand_computed_values():
    j = judgment(0.5, 1.0, 0.75, 0.25)
    # cost = min(1, 200/1000 + 0.2*0.25) = 0.25
    assert cost_penalty(200, 0.25) == pytest.approx(0.25)
    expected = 0.34 * 0.5 + 0.26 * 1.0 + 0.28 * 0.75 - 0.22 * 0.25 - 0.08 * 0.25
    assert expected == pytest.approx(0.565)
    assert utility(j, 200) == pytest.approx(0.565)
    # the cost saturates at 1: a huge unit loses exactly 0.08
    assert utility(j, 50_000) == pytest.approx(0.34 * 0.5 + 0.26 + 0.28 * 0.75 - 0.055 - 0.08)
    # ordering: necessity outweighs nothing; risk is subtracted
    ranked = sorted([("risky", judgment(0.5, 1.0, 0.75, 1.0)), ("safe", j),
                     ("idle", judgment(0.0, 0.0, 0.0, 0.0))],
                    key=lambda p: -utility(p[1], 200))
    assert [name for name, _ in ranked] == ["safe", "risky", "idle"]
    assert utility(judgment(0.0, 0.0, 0.0, 0.0), 200) == pytest.approx(-0.016)


def test_new_words_shift_the_action_only_as_far_as_the_unit_is_relevant():
    """Code is full of words the query lacks; unrelated code must not look decisive."""
    code = "def render(rows):\n    widths = measure(rows)\n    return layout(rows, widths)"
    node = Node("sym:ui.py::render", "symbol", "repo", code, 30, subject="ui.py::render")
    scorer = ProxyScorer(ContextGraph())
    unrelated = scorer.one("what timeout does connect use", Candidate(node, 0.0, 0.0, "repo"))
    assert unrelated.action_shift == 0.0  # 0.3 by novelty alone before
    related = scorer.one("how are the rows laid out", Candidate(node, 0.5, 0.0, "repo"))
    # relevance 0.6 * 0.5; novelty 5/8: five of the code's terms are not in the query;
    # nothing points at this code: background, a quarter of it
    assert related.action_shift == pytest.approx(BACKGROUND * 0.3 * (0.5 + 0.3 * 5 / 8),
                                                 abs=1e-6)


def test_code_a_fact_about_the_named_function_points_at_is_not_background():
    """The code of a dependency the developer asked for matters when the query names the
    function that needs it; the same code is background for another query, and so is a
    fact about another function when the query names one."""
    graph = ContextGraph()
    code = Node("sym:db.py::connect", "symbol", "repo", "def connect(url):\n    ...", 20,
                subject="db.py::connect")
    fact = Node("fact:1:0", "fact", "turn:1", "`save` should reuse `connect`.", 10,
                subject="save", turn=1)
    other = Node("fact:2:0", "fact", "turn:2", "`load` must cache its result.", 10,
                 subject="load", turn=2)
    for node in (code, fact, other):
        graph.add(node)
    graph.link(fact.id, code.id, "contains")
    scorer = ProxyScorer(graph)
    pointed = scorer.one("write save", Candidate(code, 0.5, 0.0, "repo"), focused=True)
    alone = scorer.one("write render", Candidate(code, 0.5, 0.0, "repo"), focused=True)
    assert pointed.necessity == pytest.approx(0.4 + 0.6 * 0.3)
    assert pointed.action_shift == pytest.approx(0.3 * (0.5 + 0.3 * 3 / 8))  # 3 new terms
    assert alone.necessity == pytest.approx(BACKGROUND * 0.6 * 0.3)
    assert utility(pointed, 20) > 0.06 > utility(alone, 20)  # CICL's floor after the first
    # a fact about another function: background when the query names one, not otherwise
    focused = scorer.one("write save", Candidate(other, 0.5, 0.0), focused=True)
    open_query = scorer.one("what did we settle", Candidate(other, 0.5, 0.0))
    assert focused.necessity == pytest.approx(BACKGROUND * 0.3)
    assert open_query.necessity == pytest.approx(0.3 + 0.15)
    # a rule about no function in particular is not background to a focused query
    rule = Node("fact:3:0", "fact", "turn:3", "Never use print; log with logging.", 10, turn=3)
    graph.add(rule)
    assert scorer.one("write save", Candidate(rule, 0.5, 0.0), focused=True).necessity \
        == pytest.approx(0.3 + 0.15)


async def test_proxy_puts_the_current_statement_about_the_subject_first(cards_env, script):
    cards = registry.create("cards", cards_env())
    await conversation(cards, script)
    units = await cards.units("Write the connect function with its timeout.")
    ranked = sorted(units, key=lambda u: -u.utility)
    ids = [u.node.id for u in ranked]
    assert ids[0] == "fact:2:0"
    assert "fact:0:0" not in ids  # superseded: never a candidate
    top = ranked[0].judgment
    assert top.necessity == 1.0 and top.scorer == "proxy"
    assert ranked[0].utility == pytest.approx(utility(top, ranked[0].node.tokens))


async def test_every_current_fact_about_the_named_function_is_a_candidate(cards_env, script,
                                                                         monkeypatch):
    """A long conversation: search alone keeps the best few; a fact about the function the
    query names must not be lost among them (more-itertools' `first`)."""
    from memory.backends import cards as cards_module

    monkeypatch.setattr(cards_module, "SEARCH_K", 0)  # search finds nothing,
    monkeypatch.setattr(cards_module, "EXPAND_FROM", 0)  # nor do the symbols' neighbours
    cards = registry.create("cards", cards_env())
    await conversation(cards, script)
    candidates = await cards.candidates("Write the connect function with its timeout.")
    about = {c.node.id: c.via for c in candidates if c.node.type == "fact"}
    assert about == {"fact:2:0": "subject"}  # the current statement about connect
    assert "fact:0:0" not in about  # superseded: never a candidate
    validate = await cards.candidates("Now write validate_input, please.")
    assert "fact:1:0" in {c.node.id for c in validate}


async def test_a_superseded_fact_never_reaches_a_card(cards_env, script):
    for packing in ("post", "pre"):
        cards = registry.create("cards", cards_env(cards_packing=packing))
        await conversation(cards, script)
        pack_ = await cards.context("connect timeout seconds", budget=4000)
        text = "\n".join(s.text for s in pack_.sections)
        assert "timeout of 10 seconds" in text
        assert "timeout of 5 seconds" not in text
        assert "revises turn 0" in text


def test_a_superseded_node_handed_to_pack_is_dropped():
    graph = ContextGraph()
    old = graph.add(Node("fact:0:0", "fact", "turn:0", "use tabs", 3, subject="style"))
    new = graph.add(Node("fact:1:0", "fact", "turn:1", "use spaces", 3, subject="style"))
    graph.supersede(new, old, 0.9)
    j = judgment(1.0, 1.0, 1.0, 0.0)
    units = [Unit(n, j, 0.8, compile_card(n, j, 0.8, graph.revised(n.id)))
             for n in (old, new)]
    packed = pack(units, 1000, lambda t: len(t.split()))
    assert [c.node_id for c in packed.cards] == ["fact:1:0"]
    assert ("fact:0:0", "not shown: superseded") in packed.dropped


@pytest.mark.parametrize("packing", ["post", "pre"])
def test_facts_about_one_subject_make_one_card_in_the_order_they_were_said(packing):
    said = [(3, "`connect` must retry twice."), (1, "`connect` takes (host, port)."),
            (7, "`connect` must log failures."), (5, "`render_form` escapes HTML.")]
    nodes = [Node(f"fact:{t}:0", "fact", f"turn:{t}", text, 8, subject=text.split("`")[1],
                  turn=t, origin_tokens=30) for t, text in said]
    j = judgment(1.0, 1.0, 1.0, 0.0)
    units = [Unit(n, j, 0.5 + i / 10, compile_card(n, j, 0.5 + i / 10, []))
             for i, n in enumerate(nodes)]
    count = lambda t: len(t.split())  # noqa: E731
    packed = pack(units, 1000, count, mode=packing)
    assert [c.node_id for c in packed.cards] == ["fact:5:0", "facts:connect"]
    card = packed.cards[1]
    assert card.members == ("fact:1:0", "fact:3:0", "fact:7:0")
    assert card.utility == pytest.approx(0.7)  # its best member's
    text = card.render()
    assert text.index("takes (host, port)") < text.index("retry twice") < text.index("log fail")
    assert audit(card).ok and card.tokens == count(text)
    alone = sum(count(u.card.render("full")) for u in units[:3])
    assert card.tokens < alone  # the shared fields are said once
    assert sum(c.tokens for c in pack(units, 40, count, mode=packing).cards) <= 40


async def test_every_card_passes_the_audit(cards_env, script):
    cards = registry.create("cards", cards_env())
    await conversation(cards, script)
    script.push(facts())
    await cards.observe(Turn(3, TRACEBACK, "fixed"))
    for query in ("connect timeout", "validate_input blank strings", "migrate failure"):
        pack_ = await cards.context(query, budget=3000)
        assert pack_.sections
        for card in cards.last_pack.cards:
            result = cards.last_pack.audits[card.node_id]
            assert result.ok, (card, result)
            assert any(v in card.action_hint.lower() for v in ACTION_VERBS)
            assert result.ratio == pytest.approx(card.tokens / card.original_tokens, abs=1e-3)


def test_the_audit_catches_missing_fields_placeholders_and_no_verb():
    node = Node("fact:0:0", "fact", "turn:0", "use tabs", 3, subject="style",
                origin_tokens=40)
    card = compile_card(node, judgment(1, 1, 1, 0), 0.5, [])
    card.tokens = 20
    assert audit(card).ok and audit(card).compressed
    card.scope = "TBD"
    assert "scope is a placeholder" in audit(card).problems
    card.scope, card.action_hint = "style", "the tabs"
    assert "action hint has no action verb" in audit(card).problems
    card.action_hint, card.trigger = "use tabs", ""
    assert audit(card).problems == ("trigger missing",)


def test_a_rendered_card_reads_back_field_by_field_at_every_level():
    """What the context inspector shows: the fields of the card the model got."""
    node = Node("fact:0:0", "fact", "turn:0", "use tabs,\nnot spaces", 3, subject="style",
                origin_tokens=40)
    card = compile_card(node, judgment(1, 1, 1, 0), 0.5, [])
    shown = {"full": ["Trigger", "Evidence", "Action hint", "Failure if ignored", "Scope"],
             "short": ["Evidence", "Action hint", "Scope"],
             "minimal": ["Evidence", "Action hint"]}
    for level, labels in shown.items():
        card_id, notes, fields = card_fields(card.render(level))
        assert (card_id, notes) == ("fact:0:0", "utility 0.50")
        assert [label for label, _ in fields] == labels
        assert dict(fields)["Action hint"] == card.action_hint
    assert "not spaces" in dict(card_fields(card.render("full"))[2])["Evidence"]
    assert card_fields("[memory card x · utility 1]") is None  # a head without fields
    assert card_fields("- use tabs") is None


@pytest.mark.parametrize("packing", ["post", "pre"])
async def test_packing_respects_the_budget(cards_env, script, packing):
    cards = registry.create("cards", cards_env(cards_packing=packing))
    await conversation(cards, script)
    count = cards.env.count
    roomy = await cards.context("connect timeout and validate_input", budget=5000)
    assert cards.last_pack.mode == packing
    for budget in (5000, roomy.tokens, 400, 150, 60, 10, 0):
        got = await cards.context("connect timeout and validate_input", budget=budget)
        assert sum(s.tokens for s in got.sections) <= budget
        assert all(s.tokens == count(s.text) for s in got.sections)
    assert roomy.sections and roomy.of_kind("repo")  # repository code competes too


async def test_pre_budget_compression_shrinks_cards_below_their_source(cards_env, script):
    cards = registry.create("cards", cards_env(cards_packing="pre"))
    talk = " ".join(["We talked with the database team this morning about slow starts,"
                     " retries and what the ops people see in production."] * 6)
    script.push(facts((CONNECT_5, "app/db.py::connect")))
    await cards.observe(Turn(0, f"{talk} {CONNECT_5}", "Understood. " + talk))
    await cards.context("connect timeout", budget=5000)
    [card] = [c for c in cards.last_pack.cards if c.node_id == "fact:0:0"]
    result = cards.last_pack.audits[card.node_id]
    assert result.ok and result.compressed and result.ratio < 0.5
    assert CONNECT_5 in card.render()
    assert card.level in ("full", "short", "minimal")


async def test_uncommitted_context_leaves_the_digest_and_graph_alone(cards_env, script):
    cards = registry.create("cards", cards_env(cards_scorer="llm"))
    await conversation(cards, script)
    before, nodes, edges = cards.state_digest(), len(cards.graph.nodes), len(cards.graph.edges)
    script.default = json.dumps({"no_context_action": "search", "with_context_action":
                                 "update connect", "action_shift": 1, "necessity": 1,
                                 "expected_outcome_uplift": 1, "negative_transfer_risk": 0,
                                 "reason": "named", "confidence": 0.9})
    await cards.context("connect timeout", budget=2000)
    assert cards.state_digest() == before
    assert (len(cards.graph.nodes), len(cards.graph.edges)) == (nodes, edges)


async def test_llm_scorer_uses_the_judges_fields_and_falls_back_to_the_proxy(cards_env,
                                                                             script):
    cards = registry.create("cards", cards_env(cards_scorer="llm"))
    await conversation(cards, script)
    assert isinstance(cards.scorer, LLMScorer)
    script.push(json.dumps({"no_context_action": "search", "with_context_action":
                            "update connect to 10 s", "action_shift": 0.5, "necessity": 1.0,
                            "expected_outcome_uplift": 0.75, "negative_transfer_risk": 0.25,
                            "reason": "named", "confidence": 0.9}))
    script.default = "no idea"
    node = cards.graph.nodes["fact:2:0"]
    other = cards.graph.nodes["fact:1:0"]
    got = await cards.scorer.judge("connect timeout", [Candidate(node, 0.8, 1.0),
                                                       Candidate(other, 0.1, 0.0)])
    assert got[0].scorer == "llm" and got[0].with_context_action == "update connect to 10 s"
    assert utility(got[0], 200) == pytest.approx(0.565)
    assert got[1].scorer == "proxy" and cards.scorer.fallbacks == 1
    both = [Candidate(node, 0.8, 1.0), Candidate(other, 0.1, 0.0)]
    assert got[1] == (await ProxyScorer(cards.graph).judge("connect timeout", both))[1]


async def test_a_failed_extraction_keeps_the_developers_sentences(cards_env, script):
    cards = registry.create("cards", cards_env())
    script.default = "not json at all"
    await cards.observe(Turn(0, "Use four spaces for indentation everywhere.", "ok"))
    [fact] = cards.graph.of_type("fact")
    assert fact.content == "Use four spaces for indentation everywhere."
    assert fact.confidence < 0.9
    [record] = [r for r in cards.drain_records() if r["op"] == "skipped"]
    assert "kept 1 developer sentences" in record["text"]


def test_the_judge_schemas_compile_to_a_grammar():
    from llama_cpp import LlamaGrammar

    from memory._schema import SchemaError, validate
    from memory.backends._cards_score import judge_schema

    schema = judge_schema(constrained=True)
    good = {"no_context_action": "search the repo", "with_context_action": "update connect",
            "action_shift": 0.5, "necessity": 1.0, "expected_outcome_uplift": 0.75,
            "negative_transfer_risk": 0.0, "reason": "named in the request",
            "confidence": 0.75}
    validate(good, schema)
    with pytest.raises(SchemaError):
        validate({**good, "necessity": 0.3}, schema)  # not one of the levels
    assert LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)


REAL_TURNS = [
    "The connect function in app/db.py must use a timeout of 5 seconds.",
    "validate_input in app/forms.py must reject strings made only of spaces.",
    "Actually, the connect function must use a timeout of 10 seconds instead.",
    "render_form must escape HTML in field values.",
]


@pytest.mark.slow
async def test_real_embedded_model_builds_a_graph_and_packs_cards(make_agent):
    """SmolLM2 under the schema grammar extracts the facts; the proxy packs them."""
    from memory.transcript import read_transcript

    agent = make_agent("cards", model="local/smollm2", max_answer_tokens=24)
    for query in REAL_TURNS:
        result = await agent.ask(query)
        assert result.ok, result.error
    records = read_transcript(agent.transcript.path).of_type("memory")
    print("memory ops:", [(r["op"], r["text"][:70]) for r in records])
    assert [r for r in records if r["op"] in ("skipped", "error")] == []
    stats = agent.llm.stats
    assert stats.grammar == stats.calls >= len(REAL_TURNS) and stats.parsed == stats.calls
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
    from memory.backends._cards_experience import session_facts

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
    from memory.backends._cards_experience import ExperienceStore

    first = registry.create("cards", env_for(cards_env, "s1"))
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
    first = registry.create("cards", env_for(cards_env, "s1"))
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
    from memory.backends._cards_experience import Experience, ExperienceStore

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


def test_the_alarm_checks_raises_and_ignores_code_that_does_not_parse():
    from memory.backends._cards_alarm import check

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
