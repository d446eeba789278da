"""cards: the context graph built from turns (facts, revisions, locations, code, failures)."""

from __future__ import annotations

import pytest

from memory.backends import registry
from memory.backends.cards.failures import failure_line, failures
from memory.types import Turn
from tests.memory.cards_support import (
    CONNECT_5,
    TRACEBACK,
    conversation,
    facts,
    said_in_turns,
)


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
    from memory.backends.cards.graph import slot

    assert slot("`connect` belongs in `app/db.py`.") == slot("- `connect` belongs in `app/x.py`")
    assert slot("`connect` takes (host).") == slot("`connect` takes (host, port, timeout).")
    assert slot("connect waits 5 seconds.") == slot("connect waits 10 seconds.")
    assert slot("`connect` takes (host).") != slot("`connect` belongs in `app/db.py`.")
    # predicates that hold several values: a second dependency adds to the first
    assert slot("`connect` needs `socket` from `socket`.") != \
        slot("`connect` needs `ssl` from `ssl`.")
    assert slot("`connect` needs `ssl` from `a.py`.") == slot("`connect` needs `ssl` from `b.py`.")


def test_a_remark_before_the_subject_is_not_part_of_the_slot():
    from memory.backends.cards.graph import closed, slot

    plain = "`connect` belongs in `app/db.py`."
    for said in ("Hmm, wait. `connect` belongs in `app/x.py`.",
                 "Talked it over with the team: `connect` belongs in `app/x.py`."):
        assert slot(said) == slot(plain) and closed(said)
    rule = "for `connect`: retry twice."
    assert slot(f"Thinking again, {rule}") == slot(rule.capitalize())
    # a condition before the subject restricts the statement: it stays in the slot
    assert slot("If the host is empty, `connect` returns `None`.") != \
        slot("`connect` returns `None`.")


async def test_a_remark_does_not_hide_a_value_revision(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = ["`connect` belongs in `app/forms.py`.",
            "`connect` should: open a connection to the database in app/db.py and return it.",
            "Hmm, thinking it over: `connect` belongs in `app/views.py`.",
            "Actually, `connect` takes (host).", "`connect` takes (host, port).",
            "Actually, `connect` belongs in `app/db.py`."]
    # the last one sets the location again; it does not retract the description
    assert await said_in_turns(cards, script, said) == [said[1], said[4], said[5]]


async def test_the_same_slot_with_another_value_supersedes_without_a_cue(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = ["`connect` belongs in `app/forms.py`.", "`connect` needs `time` from `time`.",
            "`connect` belongs in `app/db.py`.", "`connect` needs `socket` from `socket`."]
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"  # the location



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
    extractor took nothing from is kept as said; one it took a piece of is not doubled
    (the extractor reading every message, ``cards_facts=llm``)."""
    cards = registry.create("cards", cards_env(cards_facts="llm"))
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


@pytest.mark.parametrize("line, failing", [
    ("KeyError: 'email'", True),
    ("AssertionError", True),  # an assert without a message
    ("app.errors.ShopError: out of stock", True),
    ('  File "app/db.py", line 6, in migrate', True),
    ("InventoryError from inventory/errors.py should get used by parse_price.", False),
    ("ShopError is what cart_total raises on a negative quantity.", False),
    ("ValueError should never escape parse_price.", False),
])
def test_an_error_line_is_the_error_not_a_sentence_starting_with_one(line, failing):
    """A developer's sentence that starts with an exception's name is a statement."""
    assert failure_line(line) is failing


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


