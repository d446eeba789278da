"""The agent's copy: no target definitions, no tests that exercise them; callers stay.
And putting generated functions back for grading."""

from __future__ import annotations

import pytest

from memory.index.repo import RepoIndex
from memory.store import Store
from replay.locoeval.prepare import (
    PrepareError,
    exercising_tests,
    extract_function,
    insert_function,
    prepare_tree,
    prepared_copy,
    remove_function,
)
from tests.conftest import git, make_repo
from tests.replay.conftest import ANSWERS, CART, PRICES, SHOP_FILES

DECORATED = '''"""Helpers."""
import functools


class Only:
    @staticmethod
    @functools.cache
    def value(x):
        """The value."""
        return x


def keep():
    return Only.value(1)
'''


def test_remove_function_deletes_the_whole_definition():
    without = remove_function(CART, "Cart.total")
    assert "def total" not in without and "Sum of price times quantity" not in without
    assert "def __init__(self, lines=()):\n        self.lines = list(lines)" in without
    compile(without, "cart.py", "exec")
    without = remove_function(PRICES, "with_tax")
    assert "with_tax" not in without and "Return the amount with tax" not in without
    assert "TAX = 0.2" in without and "from shop.rounding import round_cents" in without
    with pytest.raises(PrepareError):
        remove_function(CART, "Cart.missing")


def test_decorators_go_and_an_emptied_class_still_parses():
    without = remove_function(DECORATED, "Only.value")
    assert "@staticmethod" not in without and "functools.cache" not in without
    assert "def value" not in without and "def keep():\n    return Only.value(1)" in without
    compile(without, "helpers.py", "exec")  # the class body became ``pass``


def test_exercising_tests_are_the_named_ones_and_those_that_call_the_target(shop_repo):
    found = exercising_tests(shop_repo, "Cart.total")
    assert found == {"tests/test_cart.py": {"test_empty_cart_costs_nothing",
                                            "test_total_with_tax"}}
    found = exercising_tests(shop_repo, "round_cents", ["tests/test_x.py::TestA::test_b[1]"])
    assert found == {"tests/test_x.py": {"TestA.test_b"}}


UNITTEST_STYLE = """\
import unittest
from unittest import TestCase

from lib import chunked, first


class ChunkedTests(TestCase):
    \"\"\"Tests for chunked.\"\"\"

    def setUp(self):
        self.data = [1, 2, 3]

    def test_even(self):
        self.assertEqual(list(chunked([1, 2], 1)), [[1], [2]])

    def test_none(self):
        self.assertEqual(list(chunked([], 1)), [])


class Helpers(unittest.TestCase):
    def test_uses_chunked(self):
        self.assertTrue(chunked)

    def test_first(self):
        self.assertEqual(first([1]), 1)


class NotATest:
    def test_chunked_like(self):
        return chunked
"""


def test_unittest_style_classes_are_tests_whatever_their_name(tmp_path):
    """pytest collects TestCase subclasses by their base, not their name (more-itertools'
    ``ChunkedTests``): their tests that exercise the target go, a class named in a node
    id loses all its tests, the other tests stay."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lib.py").write_text(UNITTEST_STYLE)
    found = exercising_tests(tmp_path, "first", ["tests/test_lib.py::ChunkedTests"])
    assert found == {"tests/test_lib.py": {"ChunkedTests.test_even", "ChunkedTests.test_none",
                                           "Helpers.test_first"}}
    found = exercising_tests(tmp_path, "chunked")
    assert found == {"tests/test_lib.py": {"ChunkedTests.test_even", "ChunkedTests.test_none",
                                           "Helpers.test_uses_chunked"}}


def test_a_type_stub_beside_the_target_loses_its_declarations(tmp_path):
    (tmp_path / "lib.py").write_text("def first(xs, default=None):\n    return xs[0]\n\n\n"
                                     "def last(xs):\n    return xs[-1]\n")
    (tmp_path / "lib.pyi").write_text(
        "from typing import overload\n\n@overload\ndef first(xs: list[int]) -> int: ...\n"
        "@overload\ndef first(xs: list[int], default: int) -> int: ...\n"
        "def last(xs: list[int]) -> int: ...\n")
    removed = prepare_tree(tmp_path, [("lib.py", "first")])
    assert removed == ["lib.py::first", "lib.pyi::first"]
    stub = (tmp_path / "lib.pyi").read_text()
    assert "first" not in stub and "def last(xs: list[int]) -> int: ..." in stub


def test_prepared_copy_has_no_targets_no_their_tests_and_keeps_callers(tmp_path, embedder):
    files = dict(SHOP_FILES)
    files["tests/test_prices.py"] += (
        "\n\ndef test_tax_rate_constant():\n    from shop.prices import TAX\n"
        "    assert TAX == 0.2\n")
    repo = make_repo(tmp_path / "shop", files)
    copy = prepared_copy(repo, [("shop/prices.py", "with_tax",
                                 ("tests/test_prices.py::test_with_tax",)),
                                ("shop/cart.py", "Cart.total")], tmp_path / "copy")
    prices = (copy / "shop/prices.py").read_text()
    assert "def with_tax" not in prices and "Return the amount with tax added" not in prices
    cart = (copy / "shop/cart.py").read_text()
    assert "def total" not in cart and "with tax; an empty cart costs 0" not in cart
    assert "from shop.prices import with_tax" in cart  # a caller's import stays
    tests = (copy / "tests/test_prices.py").read_text()
    assert "test_with_tax" not in tests and "def test_tax_rate_constant" in tests
    assert not (copy / "tests/test_cart.py").exists()  # no test left in it
    assert (repo / "shop/prices.py").read_text() == PRICES  # the original is untouched
    assert (repo / "tests/test_cart.py").exists()
    assert git(copy, "status", "--porcelain") == ""
    index = RepoIndex(copy, Store(tmp_path / "ix"), embedder)
    index.refresh()
    assert index.locate("shop/prices.py::with_tax") is None or \
        not index.locate("shop/prices.py::with_tax").exact
    assert all(c.qualname != "Cart.total" for c in index.chunks())


def test_generated_function_goes_back_indented():
    code = extract_function(ANSWERS["total"], "total")
    assert code is not None and code.startswith("def total(self):")
    restored = insert_function(CART, "Cart.total", code)
    namespace: dict = {"with_tax": lambda x: x}
    exec(compile(restored.replace("from shop.prices import with_tax", ""), "c", "exec"),
         namespace)
    assert namespace["Cart"]([(2, 3)]).total() == 6
    assert extract_function("no code at all", "total") is None
