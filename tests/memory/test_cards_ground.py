"""cards: a dependency the function's module does not know is replaced by the next one
said in the same frame; one it knows is added to (``memory/backends/cards/ground.py``).
No statement here carries a revision cue (the cue list of test_cards_revise)."""

from __future__ import annotations

import json

import pytest

from memory.backends import registry
from memory.backends.cards.ground import (
    documented,
    home,
    imported_names,
    known,
    module_names,
    module_of,
)
from memory.backends.cards.rules import LENT, LENT_MARGIN
from memory.recall.memories import list_cards
from memory.types import Turn
from tests.conftest import FORMS, git
from tests.memory.cards_support import facts, repo_env, said_in_turns
from tests.memory.test_cards_revise import URLS, no_cue

MONEY = '''"""Money helpers."""

import datetime
from decimal import ROUND_HALF_UP, Decimal

from app.urls import parse_url as parse

RATE = Decimal("0.2")


def quantize(amount):
    """Round an amount to cents."""
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def quantize_up(amount):
    """Round an amount up to whole cents."""
    return amount.quantize(Decimal("0.01"), rounding="ROUND_UP")


def round_up(amount):
    """Round an amount up to whole cents."""
    return amount.quantize(Decimal("0.01"), rounding="ROUND_UP")


def round_down(amount):
    """Round an amount down to whole cents."""
    return amount.quantize(Decimal("0.01"), rounding="ROUND_DOWN")


class RoundUp:
    """A rounding mode."""


def round_in(amount):
    """Round an amount paid in, in the payer's favour."""
    return round_down(amount)


def round_out(amount):
    """Round an amount paid out, in the payee's favour."""
    return round_up(amount)


def settle(paid, owed):
    """What comes in and what goes out, rounded."""
    return round_in(paid), round_out(owed)


def due(days):
    """The due date, ``days`` from today."""
    import hashlib
    return datetime.date.today() + datetime.timedelta(days=days), hashlib
'''


RETRY = '''"""Retry helpers."""


def backoff(attempt):
    """The delay before an attempt, in seconds.

    This relies on the *caller's* clock and never sleeps itself. Delays double from one
    attempt to the next, up to a minute; past ``limit`` it raises :exc:`~app.Give_up`.

    >>> backoff(1)
    2
    """
    return min(2 ** attempt, 60)
'''


@pytest.fixture
def home_env(tmp_path, embedder, script):
    return repo_env(tmp_path, embedder, {"app/forms.py": FORMS, "app/urls.py": URLS,
                                         "app/money.py": MONEY, "app/retry.py": RETRY,
                                         "app/__init__.py": ""})


def test_a_module_knows_what_it_defines_binds_and_imports_whole():
    names = module_names(MONEY)
    for name in ("quantize", "due", "RATE", "Decimal", "ROUND_HALF_UP", "datetime", "parse",
                 "hashlib"):  # a local import counts too
        assert name in names, name
    assert "parse_url" not in names and "InvalidOperation" not in names
    assert module_names("def broken(:\n") == frozenset()
    assert known("timedelta", "datetime", names)  # `import datetime`: its names reach
    assert known("Decimal", "decimal", names) and known("quantize()", "", names)
    assert not known("InvalidOperation", "decimal", names)  # `from decimal import` binds two
    assert not known("split_url", "app/urls.py", names)  # one name of urls.py, not the rest
    assert module_of("app/urls.py") == {"app.urls", "urls"}
    assert module_of("app/__init__.py") == {"app"}
    assert known("render_form", "app/forms.py", module_names("from app import forms\n"))


def test_the_names_a_file_imports_by_name_with_their_module():
    """What a plain word said to come from a module is checked against ("count from
    itertools"): ``from m import g`` anywhere in the file, not ``import m``, nor a relative
    import."""
    source = ("from itertools import count, chain as joined\nimport decimal\n"
              "from . import money\n\ndef f():\n    from os.path import join\n")
    assert imported_names(source) == {"itertools.count", "itertools.chain", "os.path.join"}
    assert imported_names("def broken(:\n") == frozenset()


def test_what_a_docstring_says_is_its_first_paragraph_and_each_prose_sentence():
    code = RETRY.split("\n\n\n", 1)[1]
    assert documented(code) == [
        "The delay before an attempt, in seconds.",
        "This relies on the caller's clock and never sleeps itself.",
        "Delays double from one attempt to the next, up to a minute; past `limit` it "
        "raises `app.Give_up`."]  # no doctest, RST markup as plain text
    assert documented("x = 1\n") == [] and documented("def broken(:\n") == []


def test_home_is_the_latest_file_of_the_repository_said():
    files = {"app/a.py", "app/b.py"}
    said = ["`f` belongs in `app/a.py`.", "`f` takes (x).", "`f` belongs in `app/b.py`.",
            "`f` belongs in `app/c.py`."]  # app/c.py is no file of the repository
    assert home(said, files.__contains__) == "app/b.py"
    assert home(["`f` takes (x)."], files.__contains__) == ""


async def test_an_internal_dependency_the_module_does_not_know_is_replaced(home_env, script):
    """In app/money.py: `render_form` (not imported there) gives way to the next
    dependency of the frame; `quantize` (defined there) stays when `due` is added."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` belongs in `app/money.py`.",
                   "`charge` should reuse `render_form` from `app/forms.py`.",
                   "`charge` should reuse `quantize` from `app/money.py`.",
                   "`charge` should reuse `due` from `app/money.py`."])
    assert await said_in_turns(cards, script, said) == [said[0], *said[2:]]
    assert cards.graph.nodes["fact:1:0"].superseded_by == "fact:2:0"


async def test_an_external_dependency_the_module_does_not_know_is_replaced(home_env, script):
    """`Decimal` (bound by the module) stays; `InvalidOperation` (decimal, not bound)
    gives way to the next one, `timedelta` (datetime imported whole)."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` belongs in `app/money.py`.",
                   "`charge` needs `Decimal` from the `decimal` module.",
                   "`charge` needs `InvalidOperation` from the `decimal` module.",
                   "`charge` needs `timedelta` from the `datetime` module."])
    assert await said_in_turns(cards, script, said) == [*said[:2], said[3]]
    assert cards.graph.nodes["fact:2:0"].superseded_by == "fact:3:0"


async def test_two_dependencies_the_module_does_not_know_both_stay(home_env, script):
    """Seen on cachetools: while a stale place was the latest said for `ttl_cache`, its
    true dependencies, foreign to that module, replaced one another. A foreign name
    gives way only to one the module knows."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` belongs in `app/money.py`.",
                   "`charge` should reuse `render_form` from `app/forms.py`.",
                   "`charge` should reuse `log_event` from `app/urls.py`.",
                   "`charge` needs `sha1` from the `hmac` module."])
    assert await said_in_turns(cards, script, said) == said


async def test_a_new_place_takes_the_foreign_rule_again(home_env, script, tmp_path):
    """Seen on cachetools: under a stale place said first, a true dependency looked
    foreign and gave way. When the place changes, the rule is taken again as if the new
    place had been said from the start: `quantize` is current again, and `render_form`
    (foreign to app/money.py) gives way to the next dependency app/money.py knows."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` belongs in `app/forms.py`.",
                   "`charge` should reuse `quantize` from `app/money.py`.",
                   "`charge` should reuse `render_form` from `app/forms.py`."])
    assert await said_in_turns(cards, script, said) == [said[0], said[2]]
    more = no_cue(["`charge` belongs in `app/money.py`.",
                   "`charge` should reuse `due` from `app/money.py`."])
    for i, text in enumerate(more, start=len(said)):
        script.push(facts((text,)))
        await cards.observe(Turn(i, text, "Noted."))
        if i == len(said):
            assert ("RESTORE", "fact:1:0") in cards.last_events
    current = [n.content for n in cards.graph.current() if n.type == "fact"]
    assert current == [said[1], *more]
    assert cards.graph.nodes["fact:2:0"].superseded_by == "fact:4:0"
    assert cards.graph.revised("fact:2:0") == []  # the taken-back edge is gone
    assert not any(e.dst == "fact:1:0" and e.kind == "conflict" for e in cards.graph.edges)
    records = cards.journal.drain()
    logged = " ; ".join(r["text"] for r in records if r["op"] == "LINK")
    assert all(f"{e.src} -{e.kind}-> {e.dst}" in logged for e in cards.graph.edges)
    journal = tmp_path / "journal.jsonl"  # what `engram memories` lists of it
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    listed, history = list_cards(journal).split("superseded (history")
    assert "1 superseded" not in listed and "fact:2:0 -conflict-> fact:1:0" not in listed
    assert said[1] in listed and said[1] not in history and said[2] in history


async def test_a_new_place_takes_back_a_close_name_it_has_at_hand(tmp_path, embedder,
                                                                  script):
    """Seen on isodate: under a stale place (app/zones.py, which does not know
    `parse_date`) `parse_zone` read as a close name replacing `parse_date`; the true
    place, app/stamps.py, imports both from two modules: they add, so `parse_date` is
    current again. Under a place that knows neither, the close name still replaces."""
    files = {"app/__init__.py": "",
             "app/dates.py": '"""Dates."""\n\n\ndef parse_date(text):\n    return text\n',
             "app/zones.py": '"""Zones."""\n\n\ndef parse_zone(text):\n    return text\n',
             "app/stamps.py": '"""Stamps."""\nfrom app.dates import parse_date\n'
                              'from app.zones import parse_zone\n',
             "app/other.py": '"""Other."""\n'}
    env = repo_env(tmp_path, embedder, files)
    said = no_cue(["`parse_stamp` belongs in `app/zones.py`.",
                   "`parse_stamp` should reuse `parse_date` from `app/dates.py`.",
                   "`parse_stamp` should reuse `parse_zone` from `app/zones.py`."])
    for place, current in (("app/stamps.py", said[1:]), ("app/other.py", said[2:])):
        cards = registry.create("cards", env())
        assert await said_in_turns(cards, script, said) == [said[0], said[2]]
        moved = f"`parse_stamp` belongs in `{place}`."
        script.push(facts((moved,)))
        await cards.observe(Turn(len(said), moved, "Noted."))
        assert [n.content for n in cards.graph.current() if n.type == "fact"] == [
            *current, moved]
        assert (("RESTORE", "fact:1:0") in cards.last_events) == (place == "app/stamps.py")


async def test_a_dependency_said_since_not_to_be_used_is_not_taken_back(tmp_path, embedder,
                                                                        script):
    """Review: `parse_date` gave way to a close name under a stale place, then was said
    not to be used; under the true place it is not made current again."""
    files = {"app/__init__.py": "",
             "app/dates.py": '"""Dates."""\n\n\ndef parse_date(text):\n    return text\n',
             "app/zones.py": '"""Zones."""\n\n\ndef parse_zone(text):\n    return text\n',
             "app/stamps.py": '"""Stamps."""\nfrom app.dates import parse_date\n'
                              'from app.zones import parse_zone\n'}
    env = repo_env(tmp_path, embedder, files)
    said = no_cue(["`parse_stamp` belongs in `app/zones.py`.",
                   "`parse_stamp` should reuse `parse_date` from `app/dates.py`.",
                   "`parse_stamp` should reuse `parse_zone` from `app/zones.py`.",
                   "`parse_stamp` must not call `parse_date`.",
                   "`parse_stamp` belongs in `app/stamps.py`."])
    cards = registry.create("cards", env())
    assert await said_in_turns(cards, script, said) == said[2:]


async def test_a_dependency_replaced_meanwhile_stays_replaced(home_env, script):
    """A new place takes the foreign rule back only where nothing said since revises the
    dependency by another rule: `round_up` gave way (foreign to the stale place) and then
    had an alternative said, `round_down`; under app/money.py it stays replaced."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` belongs in `app/forms.py`.",
                   "`charge` should reuse `round_up` from `app/money.py`.",
                   "`charge` should reuse `render_form` from `app/forms.py`.",
                   "`charge` should reuse `round_down` from `app/money.py`.",
                   "`charge` belongs in `app/money.py`."])
    assert await said_in_turns(cards, script, said) == [said[3], said[4]]
    assert cards.graph.nodes["fact:1:0"].superseded_by == "fact:3:0"
    assert ("RESTORE", "fact:1:0") not in cards.last_events


async def test_a_new_place_keeps_what_the_judge_decided(tmp_path, embedder, script):
    """With the revision judge: `render_form` gave way to `due` after the judge kept
    `quantize` beside it; under a new place where the same names are foreign and known,
    nothing is taken back and the judge is not asked again."""
    billing = '"""Billing."""\nfrom app.money import due, quantize\n'
    env = repo_env(tmp_path, embedder, {"app/forms.py": FORMS, "app/urls.py": URLS,
                                        "app/money.py": MONEY, "app/billing.py": billing,
                                        "app/__init__.py": ""})
    cards = registry.create("cards", env(cards_judge="llm", cards_facts="llm"))  # both scripted
    said = no_cue(["`charge` belongs in `app/money.py`.",
                   "`charge` should reuse `render_form` from `app/forms.py`.",
                   "`charge` should reuse `quantize` from `app/money.py`.",
                   "`charge` should reuse `due` from `app/money.py`.",
                   "`charge` belongs in `app/billing.py`."])
    verdicts = {2: '{"verdict": "adds"}', 3: '{"verdict": "replaces"}'}
    for i, text in enumerate(said):
        script.push(facts((text,)), *([verdicts[i]] if i in verdicts else []))
        await cards.observe(Turn(i, text, "Noted."))
    assert cards.graph.nodes["fact:1:0"].superseded_by == "fact:3:0"
    assert cards.graph.nodes["fact:2:0"].current
    assert not any(op == "RESTORE" for op, _ in cards.last_events)
    assert cards.builder.judge.stats.asked == 2


async def test_without_a_known_module_every_dependency_adds(home_env, script):
    """No place said for `charge` and none in the repository: nothing is foreign; the last
    dependency said is never replaced by the rule."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` should reuse `render_form` from `app/forms.py`.",
                   "`charge` should reuse `quantize` from `app/money.py`."])
    assert await said_in_turns(cards, script, said) == said
    more = no_cue(["`charge` belongs in `app/money.py`.",
                   "`charge` needs `InvalidOperation` from the `decimal` module."])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, more) == more
    # a function the repository has (`quantize`, in app/money.py): its code says what it
    # uses, so a dependency its module does not know is an addition
    existing = no_cue(["`quantize` needs `InvalidOperation` from the `decimal` module.",
                       "`quantize` needs `Decimal` from the `decimal` module."])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, existing) == existing


async def test_a_description_borrowed_from_another_function_gives_way(home_env, script):
    """What `split_url` documents, said of `charge`, describes `split_url`: the next
    statement about `charge` replaces it. A statement that says it adds does not; the
    function's own documented behaviour is never borrowed (a detail said beside it says
    it adds: an uncued later description replaces the earlier one, ``revise``)."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`charge` should: Split a URL string into its scheme, host and path parts.",
                   "`charge` should also log the amount it charges.",
                   "`charge` should: Bill the customer the rounded amount and return the "
                   "receipt."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.graph.nodes["fact:0:0"].superseded_by == "fact:2:0"
    assert cards.builder.reviser.borrowed_from == {"fact:0:0": "app/urls.py::split_url"}
    own = no_cue(["`split_url` should: Split a URL string into its scheme, host and path "
                  "parts.", "`split_url` should also return the parts as a tuple of strings."])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, own) == own


async def test_a_reworded_claim_of_another_function_gives_way_to_a_later_claim(home_env,
                                                                              script):
    """Another writer's rewording of `split_url`'s docstring, said of `charge`, is too far
    from the docstring to be borrowed (``BORROWED``) but near it (``LENT``): the later claim
    about `charge` replaces it (by the description rule, the later claim without its lead
    being itself near a docstring; the contrast ``LENT`` asks for is checked on its own). A
    rule of `charge`'s own said before its description is nearer to no other function's
    docstring: it stays."""
    cards = registry.create("cards", home_env())
    said = no_cue(["With `charge`, a URL string is split into its scheme, its host and its "
                   "path.",
                   "`charge` bills the customer the rounded amount and returns the receipt."])
    assert await said_in_turns(cards, script, said) == said[1:]
    reviser, graph = cards.builder.reviser, cards.graph
    assert not reviser.borrowed_from and reviser.near_other["fact:0:0"] >= LENT
    # the contrast itself: lent when the later claim is far from any docstring, not when
    # it is about as near to one (the later claim here, without its lead, is at 0.62:
    # the description rule replaces the earlier one first)
    old, later = graph.nodes["fact:0:0"], reviser.bodies["fact:1:0"]
    near = reviser.near_other["fact:0:0"]
    assert reviser.lent_by_contrast(old, near - LENT_MARGIN - 0.05, later, graph.vectors)
    assert not reviser.lent_by_contrast(old, near - LENT_MARGIN + 0.05, later, graph.vectors)
    own = no_cue(["`charge` must refuse a negative amount with a ValueError.",
                  "`charge` bills the customer the rounded amount and returns the receipt."])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, own) == own


async def test_a_borrowed_description_is_found_past_functions_named_like_the_subject(
        home_env, script):
    """`round_up_total` is named like five functions of app/money.py (`round_up`,
    `round_down`, ...), which a search with its name ranks above `backoff`, whose
    docstring the claim is: the search for the function a claim describes goes by the
    claim alone."""
    cards = registry.create("cards", home_env())
    said = no_cue(["`round_up_total` should: The delay before an attempt, in seconds.",
                   "`round_up_total` should: Round each line up, then add them up."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.builder.reviser.borrowed_from == {"fact:0:0": "app/retry.py::backoff"}


@pytest.mark.parametrize("borrowed", [
    # a sentence past the docstring's first paragraph
    "For `charge`: Delays double from one attempt to the next, up to a minute; past `limit` "
    "it raises `app.Give_up`.",
    # prose with a verb dependencies use ("relies on"): a description, not a dependency
    "For `charge`: This relies on the caller's clock and never sleeps itself."])
async def test_a_rule_borrowed_from_deeper_in_a_docstring_gives_way(home_env, script,
                                                                   borrowed):
    cards = registry.create("cards", home_env())
    said = no_cue([borrowed, "For `charge`: Refuse a negative amount with a ValueError."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.builder.reviser.borrowed_from == {"fact:0:0": "app/retry.py::backoff"}


async def test_a_borrowed_description_said_with_a_cue_still_gives_way(home_env, script):
    """The same borrowed description said as a correction ("Actually, ..."): it is read
    without its cue and its lead, so it is still another function's, and the next
    statement about `charge` replaces it (the cue words had hidden it: measured on
    more-itertools at revision cues 0.5)."""
    cards = registry.create("cards", home_env())
    said = ["`charge` should: Bill the customer the rounded amount.",
            "Actually, `charge` should: Split a URL string into its scheme, host and path "
            "parts.",
            "`charge` should: Bill the customer the rounded amount and return the receipt."]
    kept = await said_in_turns(cards, script, said)
    assert said[1] not in kept and said[2] in kept
    assert cards.builder.reviser.borrowed_from == {"fact:1:0": "app/urls.py::split_url"}


async def test_two_close_dependencies_the_module_knows_both_stay(home_env, script):
    """`quantize_up` is close to `quantize` (a similar name, the same module): said of a
    function whose module is unknown it replaces it; in app/money.py, which defines both,
    it adds."""
    said = no_cue(["`charge` should reuse `quantize` from `app/money.py`.",
                   "`charge` should reuse `quantize_up` from `app/money.py`."])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, said) == said[1:]
    placed = no_cue(["`charge` belongs in `app/money.py`.", *said])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, placed) == placed


async def test_an_alternative_name_replaces_unless_the_repository_uses_both(home_env,
                                                                           script):
    """In app/money.py, which defines them all: `round_down` (`round_up` with a word
    swapped: an alternative) replaces `round_up`; the class `RoundUp` (another kind)
    adds, and so does `round_out` after `round_in`, which `settle` uses together, also
    where no module is known (where close names replace)."""
    place = "`charge` belongs in `app/money.py`."

    def reuse(name: str) -> str:
        return f"`charge` should reuse `{name}` from `app/money.py`."

    swap = no_cue([place, reuse("round_up"), reuse("round_down")])
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, swap) == [place, swap[2]]
    for said in ([place, reuse("round_up"), reuse("RoundUp")],
                 [place, reuse("round_in"), reuse("round_out")],
                 [reuse("round_in"), reuse("round_out")]):
        cards = registry.create("cards", home_env())
        assert await said_in_turns(cards, script, no_cue(said)) == said
    reader = cards.builder.reviser.reader
    assert reader.users("round_in") == {"app/money.py::settle"}
    assert reader.users("app.money.round_up") == {"app/money.py::round_out"}
    # `amount.quantize(...)` is another object's attribute, not a use of `quantize`
    assert reader.users("quantize") == frozenset()
    assert "app/forms.py::Form.size" in reader.users("len")  # a decorated method parses
    # one last part for both: no telling them apart, though `settle` uses `round_in`
    assert not reader.used_together("app.money.round_in", "other.round_in")


async def test_a_module_said_as_a_path_or_a_dotted_name_is_one_module(home_env, script):
    """A developer names app/money.py as `app/money.py` one time and `app.money` (or
    `money`) the next: the alternative still replaces; a module that only ends alike
    (`other/money.py`) is another one, so its name adds."""
    place = "`charge` belongs in `app/money.py`."
    first = "`charge` should reuse `round_up` from `app/money.py`."
    for module in ("app.money", "money"):
        later = f"`charge` should reuse `round_down` from `{module}`."
        cards = registry.create("cards", home_env())
        assert await said_in_turns(cards, script, no_cue([place, first, later])) == [place,
                                                                                    later]
    later = "`charge` should reuse `round_down` from `other/money.py`."
    cards = registry.create("cards", home_env())
    assert await said_in_turns(cards, script, no_cue([place, first, later])) == [
        place, first, later]


async def test_an_edit_applied_midway_changes_what_the_module_knows(home_env, script):
    """app/money.py is read when `due` is said; then an edit makes it import
    `render_form` and the index is refreshed (as the app does after applying one): the
    module now knows `render_form`, so `quantize` after it adds instead of replacing a
    foreign name, and the new `show` is one of its users. Read before the edit, the
    file's old text made it foreign."""
    env = home_env()
    cards = registry.create("cards", env)
    before = no_cue(["`charge` belongs in `app/money.py`.",
                     "`charge` should reuse `due` from `app/money.py`."])
    after = no_cue(["`charge` should reuse `render_form` from `app/forms.py`.",
                    "`charge` should reuse `quantize` from `app/money.py`."])
    reader = cards.builder.reviser.reader
    for i, text in enumerate(before):
        script.push(facts((text,)))
        await cards.observe(Turn(i, text, "Noted."))
    assert "render_form" not in reader.source("app/money.py")
    assert "app/money.py::show" not in reader.users("render_form")
    money = env.repo.root / "app" / "money.py"
    money.write_text("from app.forms import render_form\n" + money.read_text()
                     + "\n\ndef show(form):\n    return render_form(form)\n")
    git(env.repo.root, "commit", "-qam", "money renders forms")
    env.repo.refresh()
    for i, text in enumerate(after, len(before)):
        script.push(facts((text,)))
        await cards.observe(Turn(i, text, "Noted."))
    assert [n.content for n in cards.graph.current() if n.type == "fact"] == before + after
    assert "render_form" in reader.source("app/money.py")
    assert "app/money.py::show" in reader.users("render_form")


CACHES = '''"""Memoizing decorators."""


def lru_cache(maxsize=128):
    """Decorator to memoize up to `maxsize` results of a function with a Least Recently
    Used (LRU) eviction policy."""
    return maxsize
'''


@pytest.mark.parametrize("first, borrowed", [
    # a sibling's docstring but for the word naming the sibling: the subject's own
    ("`lfu_cache` should: Decorator to memoize up to `maxsize` results of a function with a "
     "Least Frequently Used (LFU) eviction policy.", False),
    # the sibling's docstring as it is, said of the subject: borrowed, it gives way
    ("`lfu_cache` should: Decorator to memoize up to `maxsize` results of a function with a "
     "Least Recently Used (LRU) eviction policy.", True)])
async def test_a_siblings_docstring_without_its_naming_word_is_not_borrowed(
        tmp_path, embedder, script, first, borrowed):
    from memory.backends.cards.ground import misses_its_name

    env = repo_env(tmp_path, embedder, {"app/caches.py": CACHES, "app/__init__.py": ""})
    cards = registry.create("cards", env())
    said = no_cue([first, "`lfu_cache` should: Count the calls of each key in a dict."])
    assert await said_in_turns(cards, script, said) == (said[1:] if borrowed else said)
    assert cards.builder.reviser.borrowed_from == (
        {"fact:0:0": "app/caches.py::lru_cache"} if borrowed else {})
    assert misses_its_name("Return a cache key for the hashable arguments.",
                           "Return a typed cache key for the hashable arguments.",
                           "keys.py::typedkey", "hashkey")
    assert not misses_its_name("Return the size of an element.", "Return the size of an "
                               "element.", "a.py::getsizeof", "hashkey")


def test_a_file_and_a_dotted_name_are_one_module_only_by_the_files_last_parts():
    from memory.backends.cards.ground import same_module

    assert same_module("app/money.py", "app.money") and same_module("app/money.py", "money")
    assert same_module("src/pkg/m.py", "pkg.m") and same_module("pkg/__init__.py", "pkg")
    assert not same_module("money.py", "app.money")  # the dotted name is longer (review)
    assert not same_module("abc", "collections.abc")
    assert not same_module("a/money.py", "b/money.py")


async def test_a_function_an_edit_added_is_a_subject_by_its_plain_name(home_env, script):
    """A fact that names a function only as a plain word ("refund must ...") is about it
    when the repository has it: after an edit adds `refund` and the index is refreshed,
    the names read before the edit no longer decide."""
    env = home_env()
    cards = registry.create("cards", env)
    first = "`charge` belongs in `app/money.py`."
    script.push(facts((first,)))
    await cards.observe(Turn(0, first, "Noted."))
    assert "refund" not in cards.builder.symbol_names()
    money = env.repo.root / "app" / "money.py"
    money.write_text(money.read_text() + "\n\ndef refund(amount):\n    return -amount\n")
    git(env.repo.root, "commit", "-qam", "refunds")
    env.repo.refresh()
    plain = "refund must never return more than was paid."
    script.push(facts((plain,)))
    await cards.observe(Turn(1, plain, "Noted."))
    node = next(n for n in cards.graph.current() if n.content == plain)
    assert node.subject == "app/money.py::refund"


ONCE = '''"""Function helpers."""


def once(func):
    """Decorator that ensures a function is only executed once, caching the result for
    all subsequent calls."""
    return func
'''


async def test_a_description_whose_later_sentence_says_also_replaces_a_borrowed_one(
        tmp_path, embedder, script):
    """A sibling's docstring said of `find_files`, then its own description, whose second
    sentence starts "Also": that "also" adds to its own first sentence, not to what was
    said before, so the borrowed one gives way; an "also" in the first sentence adds."""
    env = repo_env(tmp_path, embedder, {"app/funcs.py": ONCE, "app/__init__.py": ""})
    borrowed = ("`find_files` should: Decorator that ensures a function is only executed "
                "once, caching the result for all subsequent calls.")
    own = ("`find_files` should: Return the paths of the files under a directory that "
           "match a glob pattern. Also supports leaving directories out.")
    adding = "`find_files` should also return the paths of the files under a directory."
    for said, current in (([borrowed, own], [own]), ([borrowed, adding], None)):
        cards = registry.create("cards", env())
        said = no_cue(said)
        assert await said_in_turns(cards, script, said) == (current or said)
        assert cards.builder.reviser.borrowed_from == {"fact:0:0": "app/funcs.py::once"}


ARITY = '''"""Introspection helpers."""


def arity(func):
    """Count the positional arguments of a function.

    This function relies on introspection and does not call the function.
    """
    return func.__code__.co_argcount
'''


async def test_a_borrowed_rule_that_says_does_not_call_gives_way(tmp_path, embedder, script):
    """"does not call the function" names nothing it rules out: no negation of a
    dependency, so the rules for descriptions still apply to it (a regression of the
    review's mend, found on toolz: a borrowed constraint stayed beside the true one)."""
    env = repo_env(tmp_path, embedder, {"app/intro.py": ARITY, "app/__init__.py": ""})
    cards = registry.create("cards", env())
    said = no_cue(["For `reduce_by`: This function relies on introspection and does not "
                   "call the function.",
                   "For `reduce_by`: It never builds the groups, so it runs in little memory."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.builder.reviser.borrowed_from == {"fact:0:0": "app/intro.py::arity"}


ASCII = '''"""Text helpers."""


def transliterate(string):
    """Replace non-ASCII characters with an ASCII approximation. The string must be
    ``unicode``."""
    return string
'''


async def test_a_borrowed_statement_of_a_value_gives_way_too(tmp_path, embedder, script):
    """A sibling's "The string must be `unicode`." said of `camelize` reads as a value
    (a slot: must be X), which the same-slot rule alone revised; it is borrowed as well,
    so a later own statement of another slot replaces it (inflection, a repository not
    used before: such statements stayed beside the true ones)."""
    env = repo_env(tmp_path, embedder, {"app/text.py": ASCII, "app/__init__.py": ""})
    cards = registry.create("cards", env())
    said = no_cue(["For `camelize`: The string must be `unicode`.",
                   "For `camelize`: It joins the words of a name into one, each capitalised."])
    assert await said_in_turns(cards, script, said) == said[1:]
    assert cards.builder.reviser.borrowed_from == {"fact:0:0": "app/text.py::transliterate"}


TEXT = '''"""Text helpers."""
import re


def underscore(word):
    """Make an underscored, lowercase form from a CamelCase word."""
    return re.sub(r"([a-z])([A-Z])", r"\\1_\\2", word).lower()
'''


async def test_a_function_the_conversation_places_in_the_module_is_known_there(
        tmp_path, embedder, script):
    """`humanize` is still to write, and the conversation places it in `app/text.py`, as
    `titleize`: the module will define it, so `titleize`'s dependency on it is no foreign
    name that `underscore` (defined there) replaces; both stay. Said nowhere, it gives way
    (inflection: several functions of one module to write, one reusing another)."""
    env = repo_env(tmp_path, embedder, {"app/text.py": TEXT, "app/__init__.py": ""})
    uses = ["`titleize` belongs in `app/text.py`.",
            "`titleize` should reuse `humanize` from `app/text.py`.",
            "`titleize` should reuse `underscore` from `app/text.py`."]
    placed = no_cue(["`humanize` belongs in `app/text.py`.", *uses])
    cards = registry.create("cards", env())
    assert await said_in_turns(cards, script, placed) == placed
    cards = registry.create("cards", env())
    assert await said_in_turns(cards, script, no_cue(uses)) == [uses[0], uses[2]]
