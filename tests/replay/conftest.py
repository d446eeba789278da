"""A small shop repository with tested target functions, and an outline written for it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_repo

ROUNDING = '''"""Money rounding."""


def round_cents(amount):
    """Round an amount to whole cents."""
    return round(amount, 2)
'''
PRICES = '''"""Prices and tax."""
from shop.rounding import round_cents

TAX = 0.2


def with_tax(amount):
    """Return the amount with tax added, rounded to cents."""
    return round_cents(amount * (1 + TAX))
'''
CART = '''"""The shopping cart."""
from shop.prices import with_tax


class Cart:
    """Lines of (price, quantity)."""

    def __init__(self, lines=()):
        self.lines = list(lines)

    def total(self):
        """Sum of price times quantity, with tax; an empty cart costs 0."""
        if not self.lines:
            return 0.0
        return with_tax(sum(price * qty for price, qty in self.lines))
'''
TEST_PRICES = '''from shop.prices import with_tax


def test_with_tax():
    assert with_tax(10) == 12.0
    assert with_tax(0.1) == 0.12
'''
TEST_CART = '''from shop.cart import Cart


def test_empty_cart_costs_nothing():
    assert Cart().total() == 0.0


def test_total_with_tax():
    assert Cart([(2.5, 2), (1, 1)]).total() == 7.2
'''
SHOP_FILES = {"shop/__init__.py": "", "shop/rounding.py": ROUNDING, "shop/prices.py": PRICES,
              "shop/cart.py": CART, "tests/__init__.py": "",
              "tests/test_prices.py": TEST_PRICES, "tests/test_cart.py": TEST_CART}

ANSWERS = {  # what a perfect model would write for the generation tasks
    "with_tax": "```python\ndef with_tax(amount):\n    return round_cents(amount * (1 + TAX))\n```",
    "total": "```python\ndef total(self):\n    if not self.lines:\n        return 0.0\n"
             "    return with_tax(sum(p * q for p, q in self.lines))\n```",
}

OUTLINE: dict[str, Any] = {
    "id": "shop-2", "repo": "shop", "subset": "multi-hop",
    "samples": [
        {"id": "s1", "namespace": "shop.prices.with_tax", "path": "shop/prices.py",
         "signature": "def with_tax(amount):", "tests": ["tests/test_prices.py::test_with_tax"],
         "items": [
             {"id": "s1-loc", "type": "function_location",
              "text": "with_tax lives in shop/prices.py.",
              "locations": ["shop/prices.py::with_tax"], "truth": True, "unit": "loc"},
             {"id": "s1-dep", "type": "internal_dependency",
              "text": "with_tax rounds with round_cents from shop/rounding.py.",
              "locations": ["shop/rounding.py::round_cents"], "truth": True, "unit": "dep"},
             {"id": "s1-tax-old", "type": "logical_constraint",
              "text": "The tax rate is ten percent.", "truth": False, "unit": "tax"},
             {"id": "s1-tax", "type": "logical_constraint",
              "text": "The tax rate is the module constant TAX, twenty percent.",
              "truth": True, "unit": "tax"},
         ]},
        {"id": "s2", "namespace": "shop.cart.Cart.total", "path": "shop/cart.py",
         "signature": "def total(self):",
         "tests": ["tests/test_cart.py::test_empty_cart_costs_nothing",
                   "tests/test_cart.py::test_total_with_tax"],
         "items": [
             {"id": "s2-loc", "type": "function_location",
              "text": "Cart.total is a method in shop/cart.py.",
              "locations": ["shop/cart.py::Cart.total"], "truth": True, "unit": "loc"},
             {"id": "s2-empty-old", "type": "logical_constraint",
              "text": "An empty cart raises ValueError.", "truth": False, "unit": "empty"},
             {"id": "s2-empty", "type": "logical_constraint",
              "text": "An empty cart costs 0.0.", "truth": True, "unit": "empty"},
         ]},
    ],
    "topics": [
        {"id": "t1", "kind": "task", "sample": "s1", "queries": [
            {"id": "q1", "type": "function_location", "contains": ["s1-loc"],
             "keys": [{"type": "location", "key": "shop/prices.py::with_tax"}],
             "summary": "We need a price-with-tax helper.", "recap": False},
            {"id": "q2", "type": "logical_constraint", "contains": ["s1-tax-old"],
             "keys": [], "summary": "About the tax rate.", "recap": False},
        ]},
        {"id": "n1", "kind": "noise", "sample": None, "queries": [
            {"id": "q3", "type": "other", "contains": [], "keys": [],
             "summary": "How do I write a good commit message?", "recap": False}]},
        {"id": "t2", "kind": "task", "sample": "s2", "queries": [
            {"id": "q4", "type": "function_location", "contains": ["s2-loc", "s2-empty-old"],
             "keys": [{"type": "location", "key": "shop/cart.py::Cart.total"}],
             "summary": "Next, the cart total.", "recap": False},
            {"id": "q5", "type": "logical_constraint", "contains": ["s1-dep", "s1-tax"],
             "keys": [{"type": "keyword", "key": "round_cents"}],
             "summary": "Back to the tax helper, with corrections.", "recap": False},
            {"id": "q6", "type": "logical_constraint", "contains": ["s2-empty"], "keys": [],
             "summary": "A correction about empty carts.", "recap": False},
            {"id": "q7", "type": "recap", "contains": ["s1-tax", "s2-empty"], "keys": [],
             "summary": "what holds now", "recap": True},
        ]},
    ],
    "tasks": {
        "topics": ["price with tax helper", "shopping cart total"],
        "extract": {"s1": "List everything you know about with_tax, one fact per line.",
                    "s2": "List everything you know about Cart.total, one fact per line."},
        "generate": {"s1": "Write the function with_tax now.",
                     "s2": "Write the method Cart.total now."},
    },
}


def one_per_cell(outlines: list[Any]) -> list[Any]:
    """The first outline of each (revision depth k, subset) cell: the demo's 16 outlines
    are two of each of its 4 x 2 cells, and the first eight are its shortest (32-49 turns
    against 50-69). A whole-replay test that claims an ordering or an invariant over the
    demo's kinds of outline runs these: every kind once, at 40 % of the turns."""
    seen: set[tuple[int, str]] = set()
    kept = []
    for outline in outlines:
        cell = (len(outline.samples), outline.subset)
        if cell not in seen:
            seen.add(cell)
            kept.append(outline)
    return kept


@pytest.fixture
def shop_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", SHOP_FILES)


@pytest.fixture
def outline_data() -> dict[str, Any]:
    return copy.deepcopy(OUTLINE)


@pytest.fixture
def outline_file(tmp_path: Path, shop_repo: Path, outline_data: dict[str, Any]) -> Path:
    path = tmp_path / "shop-2.json"
    path.write_text(json.dumps(outline_data))
    return path


def perfect_reply(messages: list[dict[str, Any]]) -> str:
    """The scripted model, answering the outline's tasks as well as it can."""
    last = messages[-1]["content"]
    if "Write the function with_tax" in last:
        return ANSWERS["with_tax"]
    if "Write the method Cart.total" in last:
        return ANSWERS["total"]
    if last.startswith("List every topic"):
        return "- price with tax helper\n- shopping cart total"
    if "about with_tax" in last:
        return "\n".join(i["text"] for i in OUTLINE["samples"][0]["items"] if i["truth"])
    if "about Cart.total" in last:
        return "\n".join(i["text"] for i in OUTLINE["samples"][1]["items"] if i["truth"])
    return "Noted."
