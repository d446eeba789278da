"""Stubbing target functions, and putting generated ones back."""

from __future__ import annotations

import pytest

from memory.repo import RepoIndex
from memory.store import Store
from replay.prepare import (
    STUB,
    PrepareError,
    extract_function,
    insert_function,
    stub_function,
    stubbed_copy,
)
from tests.replay.conftest import ANSWERS, CART, PRICES


def test_stub_keeps_signature_and_docstring_only():
    stubbed = stub_function(CART, "Cart.total")
    assert '"""Sum of price times quantity, with tax; an empty cart costs 0."""' in stubbed
    assert "if not self.lines" not in stubbed and f"        {STUB}" in stubbed
    assert "def __init__(self, lines=()):\n        self.lines = list(lines)" in stubbed
    compile(stubbed, "cart.py", "exec")
    with pytest.raises(PrepareError):
        stub_function(CART, "Cart.missing")


def test_generated_function_goes_back_indented():
    code = extract_function(ANSWERS["total"], "total")
    assert code is not None and code.startswith("def total(self):")
    restored = insert_function(stub_function(CART, "Cart.total"), "Cart.total", code)
    namespace: dict = {"with_tax": lambda x: x}
    exec(compile(restored.replace("from shop.prices import with_tax", ""), "c", "exec"),
         namespace)
    assert namespace["Cart"]([(2, 3)]).total() == 6
    assert extract_function("no code at all", "total") is None


def test_stubbed_copy_is_a_git_repo_without_the_answers(shop_repo, tmp_path, embedder):
    copy = stubbed_copy(shop_repo, [("shop/prices.py", "with_tax"),
                                    ("shop/cart.py", "Cart.total")], tmp_path / "copy")
    assert "round_cents(amount" not in (copy / "shop/prices.py").read_text()
    assert (shop_repo / "shop/prices.py").read_text() == PRICES
    index = RepoIndex(copy, Store(tmp_path / "ix"), embedder)
    index.refresh()
    located = index.locate("shop/prices.py::with_tax")
    assert located is not None and STUB in located.chunk.code
