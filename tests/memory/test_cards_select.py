"""cards: decision utility, candidates, cards, the audit and budget-aware packing."""

from __future__ import annotations

import json

import pytest

from memory.backends import registry
from memory.backends.cards.card import Unit, audit, compile_card
from memory.backends.cards.graph import ContextGraph, Node
from memory.backends.cards.pack import pack
from memory.backends.cards.rules import ACTION_VERBS
from memory.backends.cards.score import (
    BACKGROUND,
    SEARCH_LEAD,
    Candidate,
    LLMScorer,
    ProxyScorer,
    cost_penalty,
    utility,
)
from memory.backends.cards.text import card_fields
from memory.types import Turn
from tests.memory.cards_support import (
    CONNECT_5,
    TRACEBACK,
    conversation,
    facts,
    judgment,
    repo_env,
)


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
    shift = 0.3 * (0.5 + 0.3 * 5 / 8)
    assert related.action_shift == pytest.approx(BACKGROUND * shift, abs=1e-6)
    # unless it is the index's first hit for a query that names nothing: the evidence
    # that query has
    lead = Candidate(node, 0.5, 0.0, "repo", rank=0)
    assert scorer.one("how are the rows laid out", lead).action_shift == \
        pytest.approx(shift, abs=1e-6)
    # the second hit, or a query about another subject (focused), stays background
    second = Candidate(node, 0.5, 0.0, "repo", rank=SEARCH_LEAD)
    assert scorer.one("how are the rows laid out", second).action_shift == \
        pytest.approx(BACKGROUND * shift, abs=1e-6)
    aside = scorer.one("how are the rows laid out", lead, focused=True)
    assert aside.action_shift == pytest.approx(BACKGROUND * shift, abs=1e-6)


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
    from memory.backends.cards import backend as cards_module

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
    for packing in ("post", "pre"):  # the extractor's answers scripted: every message
        cards = registry.create("cards", cards_env(cards_packing=packing, cards_facts="llm"))
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


def test_a_card_of_statements_shows_them_without_the_words_every_such_card_repeats():
    """``post`` packing: a card of the developer's statements is shown at its ``short``
    level (evidence, action hint, scope; the turns it revises in its head), whole, in
    the order they were said; repository code the query needs keeps every field."""
    graph = ContextGraph()
    old = graph.add(Node("fact:1:0", "fact", "turn:1", "`connect` must retry twice.", 6,
                         subject="connect", turn=1, origin_tokens=30))
    new = graph.add(Node("fact:4:0", "fact", "turn:4", "`connect` must retry three times.",
                         6, subject="connect", turn=4, origin_tokens=30))
    graph.supersede(new, old, 0.9)
    rule = Node("fact:2:0", "fact", "turn:2", "`connect` takes (host, port).", 6,
                subject="connect", turn=2, origin_tokens=30)
    code = Node("sym:a.py::connect", "symbol", "repo", "def connect(host, port):\n    ...",
                9, subject="a.py::connect")
    j = judgment(0.6, 0.8, 0.6, 0.0)
    units = [Unit(n, j, 0.5, compile_card(n, j, 0.5, graph.revised(n.id)))
             for n in (new, rule, code)]
    count = lambda t: len(t.split())  # noqa: E731
    cards = {c.node_id: c for c in pack(units, 1000, count).cards}
    said = cards["facts:connect"]
    assert said.level == "short" and audit(said).ok and said.tokens == count(said.render())
    _, notes, fields = card_fields(said.render())
    assert [label for label, _ in fields] == ["Evidence", "Action hint", "Scope"]
    assert "revises turn 1" in notes
    evidence = dict(fields)["Evidence"]
    assert evidence.startswith("in this order (the latest wins):")
    assert evidence.index("takes (host, port)") < evidence.index("three times")
    assert said.tokens < count(said.render("full"))
    alone = pack(units[:1], 1000, count).cards[0]
    assert alone.level == "short" and "`connect` must retry three times." in alone.render()
    assert cards["sym:a.py::connect"].level == "full"


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
    # a function whose name reads as a placeholder (funcy has `none`) is a real scope
    named = Node("fact:1:0", "fact", "turn:1", "`none` takes (pred, seq=EMPTY).", 9,
                 subject="none", origin_tokens=40)
    card = compile_card(named, judgment(1, 1, 1, 0), 0.5, [])
    card.tokens = 20
    assert audit(card).ok and card.scope == "`none`"
    session = Node("fact:2:0", "fact", "turn:2", "Always use tabs.", 4, origin_tokens=40)
    card = compile_card(session, judgment(1, 1, 1, 0), 0.5, [])
    assert card.scope == "the whole session" and card.trigger.endswith("the code this concerns")


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
    cards = registry.create("cards", cards_env(cards_scorer="llm", cards_facts="llm"))
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
    # kept as said: a line that answers its own question stays whole, not dropped with it
    lines = ["The retry count must stay at three.",
             "Where does the retry count live? In app/settings.py."]
    await cards.observe(Turn(1, "\n".join(lines), "ok"))
    assert [n.content for n in cards.graph.of_type("fact") if n.turn == 1] == lines
    await cards.observe(Turn(2, "Where does the timeout live? In app/config.py.", "ok"))
    assert [n.content for n in cards.graph.of_type("fact") if n.turn == 2] == [
        "Where does the timeout live? In app/config.py."]  # nothing to extract: as said


def test_the_judge_schemas_compile_to_a_grammar():
    from llama_cpp import LlamaGrammar

    from memory.backends.cards.score import judge_schema
    from memory.llm._schema import SchemaError, validate

    schema = judge_schema(constrained=True)
    good = {"no_context_action": "search the repo", "with_context_action": "update connect",
            "action_shift": 0.5, "necessity": 1.0, "expected_outcome_uplift": 0.75,
            "negative_transfer_risk": 0.0, "reason": "named in the request",
            "confidence": 0.75}
    validate(good, schema)
    with pytest.raises(SchemaError):
        validate({**good, "necessity": 0.3}, schema)  # not one of the levels
    assert LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)




def test_code_the_decision_hardly_needs_is_shown_by_its_signature():
    """``post`` packing: repository code below ``BRIEF_NECESSITY`` (background) shows its
    signature and location, not its body; code the query names stays whole; a tight
    budget never makes a brief card longer."""
    body = "def {0}(x):\n    total = 0\n    for item in x:\n        total += item\n    return total"
    named = Node("sym:a.py::load", "symbol", "repo", body.format("load"), 30,
                 subject="a.py::load")
    other = Node("sym:b.py::dump", "symbol", "repo", body.format("dump"), 30,
                 subject="b.py::dump")
    needed, background = judgment(0.6, 0.8, 0.6, 0.0), judgment(0.1, 0.1, 0.1, 0.0)
    units = [Unit(named, needed, 0.5, compile_card(named, needed, 0.5, [])),
             Unit(other, background, 0.1, compile_card(other, background, 0.1, []))]
    count = lambda t: len(t.split())  # noqa: E731
    cards = {c.node_id: c for c in pack(units, 1000, count).cards}
    assert "total += item" in cards["sym:a.py::load"].render()
    brief = cards["sym:b.py::dump"].render()
    assert "def dump(x):" in brief and "b.py::dump" in brief and "total" not in brief
    assert cards["sym:b.py::dump"].level == "minimal"
    assert audit(cards["sym:b.py::dump"]).ok
    tight = pack(units, count(brief) + 12, count).cards
    assert [c.level for c in tight if c.node_id == "sym:b.py::dump"] in ([], ["minimal"])


async def test_the_extractor_reads_the_answer_s_prose_clipped_not_its_code(cards_env, script):
    """The assistant's code blocks become code units; the fact extractor gets the
    developer's message whole and the answer's prose up to ``ANSWER_CHARS``."""
    from memory.backends.cards.build import ANSWER_CHARS
    cards = registry.create("cards", cards_env(cards_facts="llm"))
    prose = "This splits the work in two steps. " * 40
    answer = f"```python\ndef connect(url):\n    return SECRET_BODY\n```\n{prose}"
    said = "`connect` must retry twice before it gives up."
    script.push(json.dumps({"facts": [{"text": said, "locations": []}]}))
    before = len(script.calls)
    await cards.observe(Turn(0, said, answer))
    prompt = "\n".join(m["content"] for m in script.calls[before])
    assert said in prompt and "SECRET_BODY" not in prompt and "[code]" in prompt
    assert prose[:ANSWER_CHARS - 20] in prompt and prose not in prompt
    assert any(n.type == "code" and "SECRET_BODY" in n.content
               for n in cards.graph.nodes.values())


COLORS = '''"""Colour values: hex strings and RGB triplets."""

import re

HEX = re.compile(r"^#([a-fA-F0-9]{3}|[a-fA-F0-9]{6})$")


def normalize_hex(hex_value: str) -> str:
    """Normalize a hexadecimal colour value to a string of a hash sign and six
    lowercase hexadecimal digits.

    Three-digit shorthand is expanded (``#fff`` becomes ``#ffffff``) and upper-case
    digits are lowered; any other form raises ``ValueError`` naming the value. The
    result is what HTML calls a valid lowercase simple colour, so two spellings of
    one colour compare equal after this function, which every converter of this
    module calls before it reads the digits.

    Examples, one per accepted spelling and one refused::

    >>> normalize_hex("#0099CC")
    '#0099cc'
    >>> normalize_hex("#0099cc")
    '#0099cc'
    >>> normalize_hex("#09C")
    '#0099cc'
    >>> normalize_hex("#fff")
    '#ffffff'
    >>> normalize_hex("0099cc")
    Traceback (most recent call last):
        ...
    ValueError: '0099cc' is not a valid hexadecimal colour value

    Why it exists: colour values reach this module from style sheets, user settings
    and other libraries, each with its own habits (upper case from design tools, the
    three-digit shorthand from hand-written style sheets, the six-digit form from
    generated ones). Comparing or converting them digit by digit would give different
    answers for one colour, so every public function of the module normalizes first
    and works on the normalized string only. Keeping the rule in one place means a new
    accepted spelling is added here once, with its example above, and every converter
    follows.

    :param hex_value: the hexadecimal colour value to normalize, with its hash sign.
    :raises ValueError: when ``hex_value`` is not three or six hexadecimal digits
        after a hash sign.
    :returns: the normalized value, a hash sign and six lowercase digits.
    """
    match = HEX.match(hex_value)
    if match is None:
        raise ValueError(f"{hex_value!r} is not a valid hexadecimal colour value")
    digits = match.group(1)
    if len(digits) == 3:
        digits = "".join(2 * d for d in digits)
    return f"#{digits.lower()}"


def hex_to_rgb(hex_value: str) -> tuple[int, int, int]:
    """The RGB triplet of a hexadecimal colour value."""
    digits = normalize_hex(hex_value)[1:]
    return tuple(int(digits[i:i + 2], 16) for i in (0, 2, 4))


def rgb_to_hex(triplet: tuple[int, int, int]) -> str:
    """The hexadecimal colour value of an RGB triplet."""
    return "#" + "".join(f"{c:02x}" for c in triplet)
'''

COLOR_TESTS = '''import pytest

from app.colors import normalize_hex


@pytest.mark.parametrize("raw", ["#fff", "#FFF", "#ffffff"])
def test_normalize_hex(raw):
    assert normalize_hex(raw) == "#ffffff"


@pytest.mark.parametrize("raw", ["#09C", "#0099CC"])
def test_normalize_hex_format(raw):
    assert normalize_hex(raw) == "#0099cc"


def test_normalize_hex_refuses():
    with pytest.raises(ValueError):
        normalize_hex("fff")
'''


QUESTION = "where is the function that normalizes a hex colour?"


async def test_a_where_is_question_in_plain_words_reaches_the_functions_code(tmp_path,
                                                                          embedder):
    """A question that names no function (the developer's words, a fresh session): the
    repository's hits are what it has; the function's own code is shown, not only
    short tests about it that are cheaper to show (the real index and MiniLM)."""
    env = repo_env(tmp_path, embedder, {"app/colors.py": COLORS, "app/__init__.py": "",
                                        "tests/test_colors.py": COLOR_TESTS})
    cards = registry.create("cards", env())
    pack = await cards.context(QUESTION, budget=4000)
    shown = [s.source for s in pack.sections if s.kind == "repo"]
    # the index's first hit; weighted as background, a short test about it (fewer
    # tokens) took the first place and the function fell under the floor
    assert cards.env.repo.functions(QUESTION, 10)[0].chunk.location == \
        "app/colors.py::normalize_hex"
    assert "app/colors.py::normalize_hex" in shown, shown
    # it is asked for by name when the developer names it, as before
    named = await cards.context("what does normalize_hex return?", budget=4000)
    assert "app/colors.py::normalize_hex" in [s.source for s in named.sections]
