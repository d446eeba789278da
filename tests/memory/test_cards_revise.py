"""cards: revisions tracked without cue words (LoCoEval's condition: only the order of two
plain statements tells which is current). No statement here says it revises anything."""

from __future__ import annotations

import re

import pytest

from memory.backends import registry
from memory.backends.cards.graph import said_of
from memory.backends.cards.judge import RevisionJudge
from memory.backends.cards.names import kind, name_similarity, swapped
from memory.backends.cards.revise import restates
from memory.backends.cards.uses import negates_use
from memory.llm.client import LLM, LLMConfig
from tests.conftest import DB, FORMS
from tests.memory.cards_support import repo_env, said_in_turns

# every cue the cue-based rules know, and the usual ways of saying "this replaces that"
CUE = re.compile(r"\b(actually|instead|scratch|forget|no longer|anymore|rather|change|"
                 r"second thought|correction|revis|replace|opposite|from now on|changed|"
                 r"outdated|obsolete|not:|for now|first version|later|temporar|placeholder|"
                 r"earlier|previous|update|wrong|mistake)", re.I)

URLS = '''"""URL helpers."""


def parse_url(text):
    """Split a URL into scheme, host, port and path."""
    scheme, _, rest = text.partition("://")
    host, _, path = rest.partition("/")
    return scheme, host, path


def split_url(text):
    """Split a URL string into its scheme, host and path parts."""
    scheme, _, rest = text.partition("://")
    return scheme, rest.split("/", 1)


def log_event(name, **fields):
    """Write one event line to the audit log."""
    print(name, fields)
'''


def no_cue(said):
    for text in said:
        assert not CUE.search(text), text
    return said


async def test_parameters_are_revised_by_the_later_list(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = no_cue(["`connect` takes (url).", "`connect` raises ValueError on an empty url.",
                   "`connect` takes (url, timeout=5)."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"


async def test_an_exception_class_is_revised_by_the_later_one(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = no_cue(["For `connect`: a refused connection raises ValueError.",
                   "`connect` takes (url, timeout).",
                   "For `connect`: a refused connection raises ConnectionError."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"


async def test_a_negated_constraint_is_revised_by_the_later_one(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = no_cue(["For `migrate`: steps run in any order and a failure is kept quiet.",
                   "For `migrate`: steps run in order and a failure is raised at once."])
    assert await said_in_turns(cards, script, said) == said[1:]


async def test_a_behaviour_is_revised_by_a_later_statement_of_it(cards_env, script):
    """The order and the failure handling of `migrate` said again, changed: the later
    statement is the current one; a constraint said between them stays."""
    cards = registry.create("cards", cards_env())
    said = no_cue(["`migrate` should apply the steps in reverse order and skip a step that "
                   "fails.",
                   "For `migrate`: an unknown step name raises KeyError.",
                   "`migrate` should apply the steps in the given order and stop at the "
                   "first step that fails."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"


async def test_a_later_description_of_the_whole_function_replaces_the_earlier(cards_env,
                                                                              script):
    """Two descriptions of what `migrate` does, in other words: one account of what a
    function does holds, the latest (both read as behaviour by meaning, not as a rule it
    keeps); with the revision judge on, its "adds" keeps both."""
    said = no_cue(["`migrate` should count the rows of every table and return the totals "
                   "as a dictionary.",
                   "`migrate` should return the sum of the lines and the prices in the "
                   "order."])
    cards = registry.create("cards", cards_env())
    assert await said_in_turns(cards, script, said) == said[1:]
    script.queue.clear()  # the reading placed both: the extractor's answers went unread
    cards = registry.create("cards", cards_env(cards_judge="llm", cards_facts="llm"))
    script.default = '{"verdict": "adds"}'
    assert await said_in_turns(cards, script, said) == said
    assert cards.builder.judge.stats.asked >= 1


async def test_a_description_leaves_a_rule_and_an_addition_alone(cards_env, script):
    """A constraint said before a description, and a description that says it adds,
    stay beside it; a line whose name is all it shares with a description ("Next: the
    parameters of `f`.") replaces nothing."""
    said = no_cue(["For `migrate`: a step name that is not registered raises KeyError.",
                   "`migrate` applies the steps in the given order and returns how many ran.",
                   "`migrate` should also write one line per step to the log.",
                   "Next: the parameters of `migrate`."])
    cards = registry.create("cards", cards_env())
    assert await said_in_turns(cards, script, said) == said


async def test_compatible_facts_about_one_function_both_stay(cards_env, script):
    cards = registry.create("cards", cards_env())
    said = no_cue(["`connect` should open a socket to the host and return the connection.",
                   "For `connect`: an empty url raises ValueError.",
                   "For `connect`: a timeout below one second is refused with TimeoutError.",
                   "`connect` should also log the host it connects to.",
                   "`connect` takes (url, timeout=5).",
                   "`connect` needs `socket` from the `socket` module."])
    assert await said_in_turns(cards, script, said) == said


@pytest.fixture
def deps_env(tmp_path, embedder, script):
    return repo_env(tmp_path, embedder, {"app/forms.py": FORMS, "app/db.py": DB,
                                         "app/urls.py": URLS})


async def test_a_dependency_is_replaced_by_a_close_one_and_added_to_by_another(deps_env,
                                                                             script):
    """`split_url` after `parse_url` (same module, a function of the same role, similar
    code) replaces it; `log_event` (same module, another role) and `render_form` add."""
    cards = registry.create("cards", deps_env())
    said = no_cue(["`connect` should reuse `parse_url` from `app/urls.py`.",
                   "`connect` should reuse `render_form` from `app/forms.py`.",
                   "`connect` should reuse `split_url` from `app/urls.py`.",
                   "`connect` should reuse `log_event` from `app/urls.py`."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"


async def test_an_external_dependency_is_replaced_by_a_close_name_not_by_another(cards_env,
                                                                                 script):
    cards = registry.create("cards", cards_env())
    said = no_cue(["`connect` needs `sha1` from the `hashlib` module.",
                   "`connect` needs `Decimal` from the `decimal` module.",
                   "`connect` needs `sha256` from the `hashlib` module.",
                   "`connect` needs `InvalidOperation` from the `decimal` module."])
    assert await said_in_turns(cards, script, said) == said[1:]


async def test_a_dependency_of_another_kind_adds_however_alike_its_name(cards_env, script):
    """Seen on cachetools: `lfu_cache` and `_cache` (functions) each took the place of
    `TTLCache` (a class), all true for `ttl_cache`; a name of another kind adds."""
    for other in ("lfu_cache", "_cache"):
        cards = registry.create("cards", cards_env())
        said = no_cue(["`ttl_cache` should reuse `TTLCache` from `cachetools/__init__.py`.",
                       f"`ttl_cache` should reuse `{other}` from `cachetools/func.py`."])
        assert await said_in_turns(cards, script, said) == said


def test_restating_needs_most_words_and_meaning():
    subject = "connect"
    assert restates("For `connect`: at most 3 retries.", "For `connect`: at most 5 retries.",
                    subject, 0.9)
    assert not restates("For `connect`: log every retry to the audit file.",
                        "For `connect`: at most 5 retries.", subject, 0.4)
    # the same words but far in meaning (a cosine the caller measured) is not enough
    assert not restates("`connect` should retry the host twice before failing hard.",
                        "`connect` should retry the host once before failing softly.",
                        subject, 0.3)


def test_names_compare_by_characters_parts_and_kind():
    assert name_similarity("parse_day", "parse_date") >= 0.6
    assert name_similarity("business_days", "InventoryError") < 0.4
    assert kind("InventoryError") == "exception" and kind("MAX_SIZE") == "constant"
    assert kind("Decimal") == "class" and kind("islice") == "function"
    assert kind("Oops", "class Oops(Exception):\n    pass") == "exception"


def test_an_alternative_name_has_one_word_swapped_for_another():
    for a, b in (("lru_cache", "lfu_cache"), ("round_up", "round_down"),
                 ("encode_url", "decode_url"), ("rr_cache", "fifo_cache")):
        assert swapped(a, b), (a, b)
    for a, b in (("quantize", "quantize_up"), ("load", "loads"), ("_urlsplit", "_urlunsplit"),
                 ("cache", "_cache"), ("parseDate", "parse_date"), ("lru_cache", "cache_lru"),
                 ("_cache", "lru_cache"), ("sort", "sort")):
        assert not swapped(a, b), (a, b)


async def test_the_judge_can_keep_both_and_fails_soft(cards_env, script):
    """With ``cards_judge=llm`` an uncertain revision (a close dependency) is asked: "adds"
    keeps both; a reply that does not parse leaves the rule's decision (counted)."""
    from tests.memory.cards_support import facts

    cards = registry.create("cards", cards_env(cards_judge="llm", cards_facts="llm"))
    from memory.types import Turn

    said = ["`connect` needs `sha1` from the `hashlib` module.",
            "`connect` needs `sha256` from the `hashlib` module."]
    script.push(facts((said[0],)))
    await cards.observe(Turn(0, said[0], "Noted."))
    script.push(facts((said[1],)), '{"verdict": "adds"}')
    await cards.observe(Turn(1, said[1], "Noted."))
    assert all(n.current for n in cards.graph.of_type("fact"))
    judge = cards.builder.judge
    assert isinstance(judge, RevisionJudge) and judge.stats.rejected == 1
    said3 = "`connect` needs `sha512` from the `hashlib` module."
    script.push(facts((said3,)), "not json", "still not json", "no")
    await cards.observe(Turn(2, said3, "Noted."))
    assert judge.stats.failed >= 1
    settings = cards.settings()
    assert settings["revision_judge"] == "llm"
    assert settings["revision_judge_rejected"] == 1 and settings["revision_judge_failed"] >= 1
    assert [n.content for n in cards.graph.current() if n.type == "fact"] == [said3]


def test_an_unknown_judge_is_a_clear_error(cards_env):
    assert registry.create("cards", cards_env()).settings()["revision_judge"] == "off"
    with pytest.raises(ValueError, match="cards_judge"):
        registry.create("cards", cards_env(cards_judge="maybe"))


@pytest.mark.slow
async def test_the_embedded_model_answers_the_judge_under_its_grammar():
    """SmolLM2 decodes under the schema's grammar: a verdict always parses (whether a 135M
    model judges well is why the judge is off by default)."""
    llm = LLM(LLMConfig(model="local/smollm2"))
    judge = RevisionJudge(llm)
    verdict = await judge.replaces("connect", "`connect` needs `sha1` from `hashlib`.",
                                   "`connect` needs `sha256` from `hashlib`.")
    assert verdict in (True, False)
    assert judge.stats.asked == 1 and judge.stats.failed == 0
    assert llm.stats.grammar == llm.stats.parsed == 1


@pytest.mark.parametrize("negation", [
    "`connect` should not reuse `parse_url`.",
    "`connect` must not depend on `parse_url`.",
    "`connect` must never call `parse_url`.",
    "`connect` should not call `parse_url` from `app/urls.py`.",
    # object-first: about the function named last
    "Don't use `parse_url` in `connect`.",
    "Never call `parse_url` inside `connect()`.",
])
async def test_a_dependency_said_not_to_be_used_gives_way_and_back(deps_env, script,
                                                                   negation):
    """A dependency later said not to be used is no longer current, and one said not to
    be used and later said to be used is; a negation of one name leaves the others of
    its module (`split_url`), and a negation of another name leaves the first."""
    use = "`connect` should reuse `parse_url` from `app/urls.py`."
    other = "`connect` should reuse `split_url` from `app/urls.py`."
    for said, current in (([use, negation], [negation]),
                          ([negation, use], [use]),
                          ([negation, other], [negation, other]),
                          ([use, "`connect` should not reuse `log_event`."], None)):
        cards = registry.create("cards", deps_env())
        assert await said_in_turns(cards, script, no_cue(said)) == (current or said)


@pytest.mark.parametrize("said_to_use", [
    "`connect` cannot work without `parse_url`.",
    "`connect` should not only use `parse_url` but also `split_url`.",
    "`connect` should not use anything but `parse_url`.",
])
async def test_a_statement_that_needs_the_dependency_is_no_negation(deps_env, script,
                                                                     said_to_use):
    """Negation words that still say the dependency is used (review): no negation. Read
    by what it says (``reading``), the later statement says again that `connect` uses
    `parse_url`: it restates the earlier one (the same dependency), which it replaces;
    what must not happen is reading it as "`connect` should not use `parse_url`"."""
    use = "`connect` should reuse `parse_url` from `app/urls.py`."
    cards = registry.create("cards", deps_env())
    said = no_cue([use, said_to_use])
    assert await said_in_turns(cards, script, said) == [said_to_use]
    later = cards.graph.nodes["fact:1:0"]
    assert later.statement == use and not negates_use(later.statement)


@pytest.mark.parametrize("text, subject, said", [
    ('"Stock.remove" takes the items out.', "Stock.remove", "takes the items out."),
    ("Stock's remove takes the items out.", "Stock.remove", "takes the items out."),
    ("remove on `Stock` takes the items out.", "shop/stock.py::Stock.remove",
     "takes the items out."),
    ("`parse_price` should: Read a price.", "parse_price", "Read a price."),
    ("Next: the parameters of parse_price().", "parse_price",
     "Next: the parameters of the function."),
    ("parse_prices reads many; parse_price reads one.", "parse_price",
     "parse_prices reads many; the function reads one."),
    # the words tying the subject to its claim, in other shapes than the template's
    ("parse_price should read a price.", "parse_price", "read a price."),
    ("Have 'parse_price' read a price.", "parse_price", "read a price."),
    ("I'd like parse_price to read a price.", "parse_price", "read a price."),
    ("For parse_price, a price is read.", "parse_price", "a price is read."),
    ("parse_price's job: read a price.", "parse_price", "job: read a price."),
    ("When asked, parse_price reads a price.", "parse_price",
     "When asked, the function reads a price."),
    ("parse_price is meant to read a price.", "parse_price", "read a price."),
    ("The job of parse_price is to read a price.", "parse_price", "read a price."),
    # sentences and leads that only say a claim follows or came before
    ("What 'parse_price' does: Read a price.", "parse_price", "Read a price."),
    ("Here is what parse_price is for. Read a price.", "parse_price", "Read a price."),
    ("Read a price. That is what `parse_price` should do.", "parse_price", "Read a price."),
    ("Can you make parse_price do the following? Read a price.", "parse_price",
     "Read a price."),
    ("What parse_price does: it is what it is.", "parse_price",
     "What the function does: it is what it is."),  # all lead: kept whole
    # a short claim is no lead: it says what the function does or is
    ("parse_price works. Do not touch it.", "parse_price", "works. Do not touch it."),
    ("parse_price should.", "parse_price", "the function should."),  # nothing left: whole
])
def test_what_a_statement_says_of_its_subject_masks_its_name(text, subject, said):
    assert said_of(text, subject) == said
