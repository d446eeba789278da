"""cards reads what a statement is about, not how it is phrased: each aspect said in
several shapes (bare and quoted names, question-shaped requests, passive, the dependency
named first, first person), each later one superseding the earlier one of another shape;
a real question states nothing. Real MiniLM, a real tree-sitter index over a git
repository in a tmp dir, ``cards_facts=said`` (no model). Our own wording: none of these
sentences is in the shape the bench's builder writes."""

from __future__ import annotations

import pytest

from memory.backends import registry
from memory.backends.cards.reading import Lexicon, Reader
from memory.backends.cards.said import asks, said_statements
from memory.index.embed import whole_words
from memory.types import Turn
from tests.memory.cards_support import repo_env

MONEY = '''"""Money helpers."""
from decimal import ROUND_HALF_UP, Decimal


def round_cents(value):
    """Round a Decimal amount to whole cents, half up."""
    return Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def to_decimal(text):
    """Read a price written as text into a Decimal."""
    return Decimal(text.strip())
'''

TEXT = '''"""Text helpers."""


def clean_code(raw):
    """Upper-case a product code and drop the spaces around it."""
    return raw.strip().upper()


def strip_accents(text):
    """Drop the accents of a text."""
    return text
'''

ORDERS = '''"""Orders."""


def split_lines(lines, size):
    """Cut order lines into batches of ``size``."""
    return [lines[i:i + size] for i in range(0, len(lines), size)]
'''

REPORT = '''"""Reports."""


def stock_lines(stock):
    """One printable line per product in stock."""
    return [f"{code}: {qty}" for code, qty in sorted(stock.items())]
'''

ERRORS = '''"""Errors."""


class ShopError(Exception):
    """Anything the shop refuses."""
'''

FILES = {"shop/__init__.py": "", "shop/money.py": MONEY, "shop/text.py": TEXT,
         "shop/orders.py": ORDERS, "shop/report.py": REPORT, "shop/errors.py": ERRORS}


@pytest.fixture
def make_env(tmp_path, embedder):
    return repo_env(tmp_path, embedder, FILES)


async def _said(cards, lines, start=0):
    for n, line in enumerate(lines, start):
        await cards.observe(Turn(n, line, "Noted."))


def _current(cards, about="cart_total"):
    return [n.content for n in cards.graph.current()
            if n.type == "fact" and n.subject.split("::")[-1] == about]


async def _each_supersedes(cards, lines):
    """Say ``lines`` one turn each: after each, it is the one current statement of them
    (the one before it superseded)."""
    for n, line in enumerate(lines):
        await cards.observe(Turn(n, line, "Noted."))
        current = [c for c in _current(cards) if c in lines]
        assert current == [line], (line, current)


async def test_a_location_said_five_ways_the_latest_holds(make_env):
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _each_supersedes(cards, [
        "cart_total belongs in shop/report.py.",  # bare name, statement
        "Put 'cart_total' in shop/money.py.",  # quoted, imperative
        "Could cart_total live in the orders module?",  # a question-shaped request
        "shop/text.py is where `cart_total` should be defined.",  # the place first
        "I'd put cart_total into shop/errors.py.",  # first person
        "cart_total should be written in the report module.",  # passive, bare module
    ])
    node = next(n for n in cards.graph.current() if n.type == "fact")
    assert node.form == "`cart_total` belongs in `shop/report.py`."


async def test_a_place_said_with_the_one_not_wanted_holds_the_wanted_one(make_env):
    """A developer names the place rejected beside the one wanted ("m.py, not n.py",
    "rather than", "instead of", the rejected first): the wanted one is the value, and it
    supersedes the earlier place said as the rejected one."""
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _each_supersedes(cards, [
        "cart_total belongs in shop/report.py.",
        "Put cart_total in shop/money.py, not shop/report.py.",
        "cart_total goes in shop/text.py rather than in shop/money.py.",
        "Instead of shop/text.py, cart_total should live in the orders module.",
        "cart_total should be defined in shop/errors.py, not in the orders module.",
    ])
    node = next(n for n in cards.graph.current() if n.type == "fact")
    assert node.form == "`cart_total` belongs in `shop/errors.py`."


async def test_a_place_ruled_out_does_not_replace_the_place_said(make_env):
    """"f must not go in n.py" says where f is not: the place said before stays."""
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _said(cards, ["cart_total belongs in shop/money.py.",
                        "cart_total must not go in shop/text.py.",
                        "cart_total doesn't belong in the report module."])
    assert "cart_total belongs in shop/money.py." in _current(cards)
    forms = [n.form for n in cards.graph.current() if n.type == "fact" and n.form]
    assert forms == ["`cart_total` belongs in `shop/money.py`."]


@pytest.mark.parametrize(("line", "options"), [
    ("from itertools import islice; cart_total uses it.",
     {"dependency": ("islice", "itertools", False)}),
    ("Decimal from decimal is what cart_total needs.",
     {"dependency": ("Decimal", "decimal", False)}),
    ("cart_total uses the time module.", {"dependency": ("time", "time", False)}),
    ("Put cart_total in shop/money.py, not shop/text.py.",
     {"location": ("shop/money.py", "", False)}),
    ("cart_total must not go in shop/text.py.", {}),
])
def test_a_long_line_reads_its_words_as_a_short_one(line, options):
    """The reading looks a few words around each word for its context (a bounded window,
    not the whole line again for each word): after 3,000 characters of prose, and before
    as many, a statement's words and values read as they do alone."""
    from memory.backends.cards.reading import _draft

    lexicon = _shop({"clean_code": "shop/text.py", "round_cents": "shop/money.py"})
    prose = "The checkout page lists every line of the cart with its price. " * 48
    assert len(prose) > 3000
    for text in (line, prose + line, f"{line} {prose}"):
        assert _draft(text, lexicon).options == options, text[:60]


def test_a_place_said_first_is_the_source_of_what_is_used(embedder):
    """"From m, f needs g": m is where g comes from, and f (a subject of the conversation,
    or the name that acts) is the subject; a module or a file alike."""
    lexicon = _shop({"clean_code": "shop/text.py", "round_cents": "shop/money.py"})
    got = Reader(embedder).read_all([
        "From the decimal module, cart_total needs Decimal.",
        "From shop/money.py, cart_total should reuse round_cents.",
        "From shop/money.py, order_total should reuse round_cents.",
        "From decimal, Decimal is what cart_total needs.",
    ], lexicon)
    assert [r.form() for r in got] == [
        "`cart_total` needs `Decimal` from the `decimal` module.",
        "`cart_total` should reuse `round_cents` from `shop/money.py`.",
        "`order_total` should reuse `round_cents` from `shop/money.py`.",
        "`cart_total` needs `Decimal` from the `decimal` module.",
    ]


def test_a_name_or_place_not_wanted_is_no_value(embedder):
    """The rejected name or place is no value; a negated use ("should not reuse g") still
    names its dependency (the statement negates it); "not only g but also h" rejects
    nothing; a place only rejected, or one its clause negates ("must not go in n.py"), is
    no place; a negation in another clause rejects nothing."""
    lexicon = _shop({"clean_code": "shop/text.py", "round_cents": "shop/money.py"})
    got = Reader(embedder).read_all([
        "Instead of round_cents, cart_total should reuse clean_code.",
        "cart_total should reuse round_cents, not clean_code.",
        "cart_total should not reuse clean_code.",
        "cart_total needs not only round_cents but also clean_code.",
        "cart_total is not in shop/text.py.",
        "Where should cart_total go? The shop.money module, not text.py.",
        "cart_total must not go in shop/text.py.",
        "cart_total doesn't belong in shop/text.py.",
        "Don't put cart_total in shop/text.py, put it in shop/money.py.",
        "If it is not, put cart_total in shop/text.py.",
        "cart_total, which is not tested yet, belongs in shop/money.py.",
    ], lexicon)
    assert [r.form() for r in got] == [
        "`cart_total` should reuse `clean_code` from `shop/text.py`.",
        "`cart_total` should reuse `round_cents` from `shop/money.py`.",
        "`cart_total` should reuse `clean_code` from `shop/text.py`.",
        "`cart_total` should reuse `round_cents` from `shop/money.py`.",
        "",
        "`cart_total` belongs in `shop/money.py`.",
        "",
        "",
        "`cart_total` belongs in `shop/money.py`.",
        "`cart_total` belongs in `shop/text.py`.",
        "`cart_total` belongs in `shop/money.py`.",
    ]


async def test_parameters_said_five_ways_the_latest_hold(make_env):
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _each_supersedes(cards, [
        "cart_total takes (lines).",
        "Could 'cart_total' take (lines, prices)?",
        "I'd have cart_total accept (items, prices, currency).",
        "The signature of `cart_total` should be (lines, prices, rounding=True).",
        "(lines, table) are the arguments cart_total is called with.",
        "Let \"cart_total\" receive (lines, price_table).",
    ])


async def test_annotated_parameters_said_five_ways_the_latest_hold(make_env):
    """Signatures as they are pasted from code: annotations holding commas inside brackets
    and quotes, a tuple default, keyword-only and ``**kwargs``; the same list said with
    other spaces and quotes is one value."""
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _each_supersedes(cards, [
        "cart_total accepts (lines: \"t.Collection[Line]\", prices: dict[str, Decimal]).",
        "Give cart_total the parameters (lines, prices: t.Mapping[str, t.Any], *, "
        "rounding: 'Literal[\"up\", \"down\"]' = \"up\").",
        "cart_total's signature: (raw_lines, prices, **kwargs: t.Any).",
        "Can cart_total take (lines, prices, bounds: tuple[int, int] = (0, 10))?",
        "(lines: list[str], table: t.Optional[t.Callable[..., Decimal]] = None) is what "
        "cart_total should be called with.",
    ])
    node = next(n for n in cards.graph.current() if n.type == "fact")
    assert node.form == ("`cart_total` takes (lines: list[str], "
                         "table: t.Optional[t.Callable[..., Decimal]]=None).")
    await _said(cards, ["cart_total takes (lines:list[str], table : "
                        "t.Optional[t.Callable[...,Decimal]]= None)."], start=9)
    assert len(_current(cards)) == 1  # the same list again: a repeat, not a second one


async def test_a_behaviour_said_five_ways_the_latest_holds(make_env):
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _each_supersedes(cards, [
        "cart_total returns the sum of quantity times unit price, rounded to cents.",
        "Could 'cart_total' return the sum of quantity times unit price, rounded to "
        "whole euros?",
        "I'd like cart_total to return the sum of quantity times unit price, rounded "
        "to tenths of a cent.",
        "The sum of quantity times unit price, rounded down to cents, is what "
        "`cart_total` should return.",
        "Have cart_total return the sum of quantity times unit price, not rounded at all.",
    ])


async def test_an_internal_dependency_said_five_ways_the_latest_holds(make_env):
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _said(cards, ["cart_total belongs in shop/orders.py."])
    lines = [
        "cart_total should lean on clean_code from shop/text.py.",  # bare
        "cart_total shouldn't use 'clean_code'.",  # quoted, negated
        "Can cart_total call clean_code from the text module?",  # question, bare module
        "clean_code must not be used by `cart_total`.",  # the dependency first, passive
        "From shop/text.py, I'd take clean_code for cart_total.",  # the source first
        "I don't want cart_total to call clean_code.",  # first person
    ]
    for n, line in enumerate(lines, 1):
        await cards.observe(Turn(n, line, "Noted."))
        current = [c for c in _current(cards) if c in lines]
        assert current == [line], (line, current)
    assert cards.graph.nodes["fact:1:0"].form == \
        "`cart_total` should reuse `clean_code` from `shop/text.py`."


async def test_an_external_dependency_said_five_ways_the_latest_holds(make_env):
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _said(cards, ["cart_total belongs in shop/orders.py."])
    lines = [
        "cart_total needs Decimal from decimal.",  # bare
        "Decimal from the decimal module should not be used by cart_total.",  # passive
        "Could `cart_total` use decimal.Decimal?",  # question, dotted
        "I'd rather cart_total didn't import 'Decimal'.",  # first person, quoted
        "From the decimal module, take Decimal for cart_total.",  # the source first
    ]
    for n, line in enumerate(lines, 1):
        await cards.observe(Turn(n, line, "Noted."))
        current = [c for c in _current(cards) if c in lines]
        assert current == [line], (line, current)
    assert cards.graph.nodes["fact:1:0"].form == \
        "`cart_total` needs `Decimal` from the `decimal` module."


async def test_two_unrelated_dependencies_both_hold(make_env):
    """A second name is an addition, however either is phrased."""
    cards = registry.create("cards", make_env(cards_facts="said"))
    said = ["cart_total belongs in shop/orders.py.",
            "cart_total should lean on clean_code from shop/text.py.",
            "Could 'cart_total' use round_cents from the money module?"]
    await _said(cards, said)
    assert _current(cards) == said


async def test_a_real_question_states_nothing(make_env):
    cards = registry.create("cards", make_env(cards_facts="said"))
    said = ["cart_total belongs in shop/orders.py."]
    await _said(cards, [*said, "What does cart_total return for an empty cart?",
                        "Where is cart_total defined?", "Could cart_total be simpler?",
                        "Is 'cart_total' safe to call with no lines?"])
    assert _current(cards) == said
    assert [n.content for n in cards.graph.current() if n.type == "fact"] == said


async def test_a_name_that_is_a_word_is_read_again_once_it_is_a_subject(make_env):
    """`sliced` and `first` said bare read as plain words until a statement quotes them;
    the earlier statements are then read as about them, and revised as any would be (a
    name inside the parameter list is never the subject)."""
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _said(cards, ["I'd put sliced in shop/money.py.",
                        "Give first the parameters (raw_items, default=None)."])
    assert not [n for n in cards.graph.current() if n.type == "fact" and n.form]
    later = ["Could you put 'sliced' into 'shop/text.py'?",
             "`first` should take (items, default=None)."]
    await _said(cards, later, start=2)
    current = [n for n in cards.graph.current() if n.type == "fact"]
    assert sorted(n.content for n in current) == sorted(later)
    assert {n.subject.split("::")[-1] for n in cards.graph.superseded()} == {"sliced", "first"}


async def test_a_word_the_repository_defines_is_read_again_too(tmp_path, embedder):
    """`first` defined in the repository: a bare "first" still reads as a word (the
    subject a plain word gives is no reading), and the statement is read again once
    `first` is quoted."""
    make = repo_env(tmp_path, embedder,
                    {**FILES, "shop/util.py": "def first(items):\n    return items[0]\n"})
    cards = registry.create("cards", make(cards_facts="said"))
    await _said(cards, ["Give first the parameters (raw_items, default=None)."])
    await _said(cards, ["`first` should take (items, default=None)."], start=1)
    current = [n.content for n in cards.graph.current() if n.type == "fact"]
    assert current == ["`first` should take (items, default=None)."]


def test_a_subject_said_in_parentheses_is_read(embedder):
    """Only a parameter list hides a name from being the subject, not any parentheses."""
    lexicon = Lexicon(frozenset({"cart_total"}), ("shop/money.py",),
                      {"cart_total": "shop/money.py"})
    got = Reader(embedder).read_all(["(Put `cart_total` in shop/money.py.)",
                                     "The rounding (for `cart_total`) must be half-up.",
                                     "Give first the parameters (raw_items, default=None)."],
                                    lexicon)
    assert got[0].subject == got[1].subject == "cart_total"
    assert got[2].subject == ""


async def test_a_question_the_developer_answers_states_the_answer(make_env):
    """"Where does f go? In m.py." says where f goes; "What does f do? Thanks." nothing."""
    cards = registry.create("cards", make_env(cards_facts="said"))
    await _said(cards, ["What does cart_total do? Thanks.",
                        "Where does cart_total go? Maybe shop/text.py?",  # no answer: a guess
                        "Fix `cart_total`. Why not?",
                        "Where does cart_total go? In shop/money.py.",
                        'Where should "cart_total" live? In "shop/orders.py".'])
    [node] = [n for n in cards.graph.current() if n.type == "fact"]
    assert node.form == "`cart_total` belongs in `shop/orders.py`."


@pytest.mark.parametrize("question, request_", [
    ("What does cart_total do?", False),
    ("Where should cart_total go?", False),
    ("Could `cart_total` be simpler?", False),
    ("Can cart_total reuse clean_code?", True),
    ("Could cart_total take (lines, prices)?", True),
    ("How about putting cart_total in shop/orders.py?", True),
    ("Should it raise ShopError on a negative quantity?", True),
    ("Can cart_total be declared with (lines, prices=None)?", True),  # passive requests
    ("Could cart_total be moved to shop/orders.py?", True),
    ("Can cart_total be called twice?", False),  # a passive with no place or list: asks
    ("Will cart_total be moved to shop/orders.py?", False),  # a prediction asks
    ("Should cart_total be moved somewhere else?", False),
])
def test_a_request_phrased_as_a_question_states_what_is_wanted(question, request_):
    assert asks(question) is not request_


def test_names_resolve_against_the_repository_and_the_conversation(embedder):
    lexicon = Lexicon(frozenset({"clean_code", "round_cents"}),
                      ("shop/text.py", "shop/money.py", "shop/orders.py"),
                      {"clean_code": "shop/text.py", "round_cents": "shop/money.py"},
                      frozenset({"cart_total"}))
    reader = Reader(embedder)
    got = reader.read_all(["round_cents should be used by cart_total.",
                           "text.py's clean_code is what cart_total should call.",
                           "Move cart_total to money.",
                           "For cart_total: a negative quantity raises ShopError."],
                          lexicon)
    assert [(r.subject, r.aspect) for r in got] == [
        ("cart_total", "dependency"), ("cart_total", "dependency"),
        ("cart_total", "location"), ("cart_total", "constraint")]
    assert got[0].form() == "`cart_total` should reuse `round_cents` from `shop/money.py`."
    assert got[1].form() == "`cart_total` should reuse `clean_code` from `shop/text.py`."
    assert got[2].form() == "`cart_total` belongs in `shop/money.py`."


def test_a_name_taken_from_a_module_bare_plain_or_out_of_it(embedder):
    """A bare name before "from m." at a sentence's end, a quoted one "out of m", a plain
    word ("count") the repository imports by that name from the module said, and a dotted
    module whose file has a type stub beside it (shop/orders.py and shop/orders.pyi): each
    read as what it is. A plain word the repository does not import from there stays a
    word ("count from zero"), and a noun after an article is no module ("from the string",
    though `string` is one)."""
    lexicon = Lexicon(frozenset({"clean_code"}),
                      ("shop/text.py", "shop/orders.py", "shop/orders.pyi"),
                      {"clean_code": "shop/text.py"}, frozenset({"cart_total"}),
                      imported=frozenset({"itertools.count", "decimal.Decimal"}))
    reader = Reader(embedder)
    got = reader.read_all(["cart_total relies on pairwise from itertools.",
                           "cart_total leans on `accumulate` out of itertools.",
                           "cart_total needs count from the itertools module.",
                           "I'd keep cart_total in shop.orders.",
                           "cart_total should count from zero.",
                           "cart_total drops the spaces out of the string."], lexicon)
    assert [r.form() for r in got[:4]] == [
        "`cart_total` needs `pairwise` from the `itertools` module.",
        "`cart_total` needs `accumulate` from the `itertools` module.",
        "`cart_total` needs `count` from the `itertools` module.",
        "`cart_total` belongs in `shop/orders.py`."]
    assert got[4].aspect != "dependency" and got[5].aspect != "dependency"


def test_a_verb_before_on_a_class_is_no_method_of_it(embedder):
    """"lean on `Ledger`" is a dependency on the class, not a method `lean` of it; "post on
    Ledger" is the method the conversation talks about (`Ledger.post`, not in the
    repository yet)."""
    lexicon = Lexicon(frozenset({"Ledger", "clean_code"}), ("shop/ledger.py", "shop/text.py"),
                      {"Ledger": "shop/ledger.py", "clean_code": "shop/text.py"},
                      frozenset({"cart_total", "ledger.post"}))
    reader = Reader(embedder)
    got = reader.read_all(["Can cart_total lean on `Ledger` from shop/ledger.py?",
                           "Can post on Ledger lean on clean_code from shop/text.py?"],
                          lexicon)
    assert got[0].form() == "`cart_total` should reuse `Ledger` from `shop/ledger.py`."
    assert got[1].form() == "`Ledger.post` should reuse `clean_code` from `shop/text.py`."


@pytest.mark.parametrize("line", [
    "cart_total can't work without Decimal, which comes from the decimal module.",
    "cart_total uses clean_code, which is in shop/text.py.",
    "Put cart_total in shop/money.py, is that fine with the tests?",
    "What 'Cart.add_line' does: Add a line to the cart.",  # a lead before a claim
])
def test_a_clause_before_a_comma_is_no_opener(line):
    """What comes after a clause and a comma is no heading nor question of its own."""
    assert not asks(line)
    assert [f.text for f in said_statements(line)] == [line]


@pytest.mark.parametrize("line", ["Moving on: where cart_total should live.",
                                  "Also, Where `cart_total` should live.",
                                  "Also, what does cart_total do?",
                                  "For `cart_total`, what should it return?",
                                  "Before we move on to tests, where should cart_total live?",
                                  "By the way, what cart_total returns.",
                                  "cart_total: where should it live?"])
def test_a_label_before_a_heading_or_question_is_cut(line):
    assert asks(line)


def _shop(defined: dict[str, str]) -> Lexicon:
    """A lexicon of the shop's two modules defining ``defined``, ``cart_total`` a subject of
    the conversation, English words as the embedder has them."""
    return Lexicon(frozenset(defined), ("shop/text.py", "shop/money.py"), defined,
                   frozenset({"cart_total"}), words=whole_words())


def test_words_the_statement_itself_shows_to_be_names(embedder):
    """A module said again bare, a word the repository defines in the file the statement
    names, are names; "and/or" is no path and "report.txt" no module's name."""
    lexicon = _shop({"clean_code": "shop/text.py", "round_cents": "shop/money.py",
                     "split": "shop/text.py"})
    got = Reader(embedder).read_all([
        "From the decimal module, cart_total needs decimal.",
        "Don't rewrite split for cart_total; take the one in shop/text.py.",
        "cart_total should: add the tax and/or the fee of each line.",
        "cart_total should: copy report.txt to report.1.txt when the report exists.",
    ], lexicon)
    assert got[0].form() == "`cart_total` needs `decimal` from the `decimal` module."
    assert got[1].form() == "`cart_total` should reuse `split` from `shop/text.py`."
    assert [(r.subject, r.form()) for r in got[2:]] == [("cart_total", "")] * 2


async def test_a_question_answered_on_its_line_is_kept_whole_when_read(make_env):
    """With the default reading (no model call for what it places), a line that answers
    its own question is a statement, shown with its question: its answer alone ("The
    shop.orders module.") would not say whose place it is."""
    cards = registry.create("cards", make_env())
    await _said(cards, ["Moving on: Where `cart_total` should live.\n"
                        "- Where should cart_total go? shop/money.py.\n"
                        "(See `shop/money.py`.)"])
    assert _current(cards) == ["Where should cart_total go? shop/money.py."]
    await _said(cards, ["Where should `cart_total` go? The shop.orders module."], 1)
    assert _current(cards) == ["Where should `cart_total` go? The shop.orders module."]
    [node] = [n for n in cards.graph.current() if n.type == "fact"]
    assert node.form == "`cart_total` belongs in `shop/orders.py`."


def test_an_inflected_word_said_bare_is_a_word_quoted_a_name(embedder):
    """A function named like an inflected English word ("cached") is a word when said
    bare in a description, a name when quoted."""
    lexicon = _shop({"cached": "shop/money.py"})
    got = Reader(embedder).read_all([
        "cart_total decorates a function so it runs once, with the result cached for all "
        "later calls.",
        "`make_total` decorates a function so it runs once, with the result cached for all "
        "later calls.",  # beside a quoted name, not a subject yet
        "cart_total should reuse `cached` from shop/money.py."], lexicon)
    assert [(r.subject, r.form()) for r in got] == [
        ("cart_total", ""), ("make_total", ""),
        ("cart_total", "`cart_total` should reuse `cached` from `shop/money.py`.")]


def test_a_word_the_file_defines_is_a_name_only_as_a_thing_said(embedder):
    """A word the named file defines is no name in a verb's place ("it should wrap the
    lines"), nor an inflected word the only candidate ("Put chunked in ..."); a dotted name
    of a module not imported yet is a dependency, a file's name is none."""
    lexicon = _shop({"wrap": "shop/text.py", "chunked": "shop/text.py",
                     "clean_code": "shop/text.py"})
    got = Reader(embedder).read_all([
        "Put cart_total in shop/text.py; it should wrap the lines at 80 columns.",
        "Put chunked in shop/money.py.",
        "cart_total should call dateutil.parser.isoparse.",
    ], lexicon)
    assert [r.form() for r in got] == [
        "`cart_total` belongs in `shop/text.py`.", "`chunked` belongs in `shop/money.py`.",
        "`cart_total` needs `isoparse` from the `dateutil.parser` module."]
