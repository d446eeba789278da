"""Items a developer would say: docstrings become plain sentences (no RST roles or link
targets, doctests whole as "`f(x)` returns `y`.", cuts at sentence ends only)."""

from __future__ import annotations

import random
import re

from replay.locoeval import DEMO
from replay.locoeval._analyse import Target, analyse
from replay.locoeval._prose import cut, doc_sentences, split_sentences
from replay.locoeval.build import load_targets, repo_facts, sample_items
from tests.conftest import make_repo

RST_DOC = '''Return the first item of *iterable*, or *default* if *iterable* is empty.

    .. _lazy evaluation:

    Uses :func:`next` on :func:`iter`, like :meth:`~collections.deque.popleft`; see
    ``itertools`` and `the recipes <https://docs.python.org/3/library/itertools.html>`_.

    >>> first([0, 1, 2, 3])
    0
    >>> first([], 'some default')
    'some default'

    .. versionadded:: 2.1
        The *default* argument.

    :param iterable: the items
    :raises ValueError: when empty and no default
    '''

SETUP_DOC = '''Split an iterable.

    >>> data = [1, 2, 3, 4]
    >>> list(halves(data))
    [[1, 2], [3, 4]]
    >>> big = list(range(1000)) + list(range(2000)) + list(range(3000)) + [1, 2, 3, 4, 5]
    >>> len(list(halves(big)))
    2
    >>> it = iter(data)
    >>> next(it)
    1
    >>> next(it)
    2
    >>> for part in halves(data):
    ...     print(part)
    [1, 2]
    [3, 4]
    >>> halves(data, 3)
    Traceback (most recent call last):
    ...
    ValueError: too many parts
    >>> sorted(halves(data))
    [[1, 2],
     [3, 4]]
    '''


def test_rst_roles_link_targets_and_fields_go():
    sentences, examples = doc_sentences(RST_DOC)
    assert sentences == [
        "Return the first item of iterable, or default if iterable is empty.",
        "Uses `next` on `iter`, like `popleft`.", "See `itertools` and the recipes."]
    assert examples == ["`first([0, 1, 2, 3])` returns `0`.",
                        "`first([], 'some default')` returns `'some default'`."]


def test_a_doctest_is_kept_only_whole():
    """A short setup is inlined once; a long one, an iterator used twice, a loop, a
    traceback and a result over two lines are not said."""
    _, examples = doc_sentences(SETUP_DOC)
    assert examples == ["`list(halves([1, 2, 3, 4]))` returns `[[1, 2], [3, 4]]`.",
                        "`next(iter([1, 2, 3, 4]))` returns `1`."]


def test_sentences_end_where_sentences_end():
    text = "Sort the items, e.g. by name. Keep `a. b` together! Stop here? yes. Last"
    assert split_sentences(text) == ["Sort the items, e.g. by name.", "Keep `a. b` together!",
                                     "Stop here?", "yes.", "Last"]
    assert cut(["One two.", "Three four five.", "Six."], 20) == ["One two."]
    assert cut(["A very long first sentence that does not fit."], 10) == [
        "A very long first sentence that does not fit."]  # never cut inside one
    said, _ = doc_sentences("Parse a day; InventoryError otherwise.\n\nTake qty units out "
                            "of stock; a SKU that reaches zero is dropped.", {"qty"})
    assert said == ["Parse a day; InventoryError otherwise.", "Take qty units out of stock.",
                    "A SKU that reaches zero is dropped."]


def _items(repo, targets, seeds):
    """Every item (true and stale) of each target's sample, over seeds."""
    facts = repo_facts(repo)
    for seed in seeds:
        for target in targets:
            yield from sample_items(target, analyse(repo, target, facts), facts,
                                    random.Random(seed), "s1")


def test_built_items_read_like_a_developer(tmp_path):
    doc = RST_DOC.replace("first", "head")
    repo = make_repo(tmp_path / "r", {
        "pkg/__init__.py": "",
        "pkg/core.py": f'def head(iterable, default=None):\n    """{doc}"""\n'
                       "    return next(iter(iterable), default)\n\n\n"
                       f'def halves(data, parts=2):\n    """{SETUP_DOC}"""\n'
                       "    return [data[:2], data[2:]]\n\n\n"
                       'def tail(items):\n    """The last item.\n\n    Raises :exc:`ValueError`'
                       ' when *items* is empty."""\n    return items[-1]\n',
        "pkg/other.py": 'def other(x):\n    """Double x, at most 10 times."""\n'
                        "    return 2 * x\n"})
    targets = [Target("pkg/core.py", "head", ("t",)), Target("pkg/core.py", "halves", ("t",)),
               Target("pkg/core.py", "tail", ("t",)), Target("pkg/other.py", "other", ("t",))]
    texts = [i["text"] for i in _items(repo, targets, range(6))]
    demo = [i["text"] for i in _items(DEMO / "inventory", load_targets(DEMO / "targets.json"),
                                       range(3))]
    for text in texts + demo:
        assert not re.search(r":\w+:`|\.\. _|\.\. \w+::|>>>|``|\*\w+\*|Traceback", text), text
        assert text[-1] in ".!?", text  # a whole sentence, never a cut
    # what it does: one or two sentences, the first whole example when the prose has one
    assert "`head` should: Return the head item of iterable, or default if iterable is " \
           "empty. Uses `next` on `iter`, like `popleft`." in texts
    assert "`halves` should: Split an iterable. `list(halves([1, 2, 3, 4]))` returns " \
           "`[[1, 2], [3, 4]]`." in texts
    assert "For `tail`: Raises `ValueError` when items is empty." in texts


def test_a_table_is_left_out_whole():
    """An RST table (simple or grid) is no sentence: w3lib's `remove_tags` made one item
    of its table's borders and cells."""
    doc = """Remove tags.

    ==========  ==========  ===============
    `which`     `keep`      what it does
    ==========  ==========  ===============
    not empty   empty       remove the tags
    ==========  ==========  ===============

    Tags in comments stay.

    +-----+-----+
    | x   | y   |
    +=====+=====+
    | 1   | 2   |
    +-----+-----+

    Nothing else changes."""
    prose, _ = doc_sentences(doc)
    assert prose == ["Remove tags.", "Tags in comments stay.", "Nothing else changes."]
