"""The ctx stale floors of a set of outlines: what a memory right on all else shows as
stale when it keeps every stale dependency, or those the function's module has at hand."""

from __future__ import annotations

import pytest

from replay.locoeval import DEMO
from replay.locoeval.floor import at_hand, module_knows, stale_floor
from replay.locoeval.outline import Item, Sample, load_outlines


def _sample(*items: tuple[str, bool, str], path: str = "app/orders.py") -> Sample:
    return Sample("s1", "app.orders.f", path, "def f()", (), tuple(
        Item(f"s1-{n}", kind, text, truth=truth) for n, (kind, truth, text) in enumerate(items)))


def test_only_the_stale_dependencies_count_beside_every_true_item() -> None:
    one = _sample(("function_location", False, "`f` belongs in `app/x.py`."),
                  ("function_location", True, "`f` belongs in `app/orders.py`."),
                  ("internal_dependency", False, "`f` should reuse `g` from `app/x.py`."),
                  ("internal_dependency", True, "`f` should reuse `h` from `app/x.py`."),
                  ("external_dependency", False, "`f` needs `dumps` from the `json` module."),
                  ("core_functionality", True, "`f` should: add them up."))
    assert stale_floor([one]) == pytest.approx(2 / 5)
    assert stale_floor([one], lambda s, i: i.type == "function_location") == pytest.approx(1 / 4)
    assert stale_floor([one], lambda s, i: False) == 0.0


def test_the_mean_over_samples_is_taken_as_ctx_stale_is() -> None:
    clean = _sample(("core_functionality", True, "`f` should: add."))
    revised = _sample(("external_dependency", False, "`f` needs `a` from the `m` module."),
                      ("external_dependency", True, "`f` needs `b` from the `m` module."))
    assert stale_floor([clean, revised]) == pytest.approx((0 + 1 / 2) / 2)
    assert stale_floor([]) is None


def test_what_a_module_knows() -> None:
    names, modules = module_knows(
        "import os.path\nimport json as j\nfrom . import misc\nfrom decimal import Decimal\n"
        "LIMIT = 3\nclass Cart:\n    def total(self): ...\ndef parse(x): ...\n")
    assert {"os", "j", "misc", "Decimal", "LIMIT", "Cart", "parse"} <= names
    assert "total" not in names  # a method is no name of the module
    assert {"os.path", "json", "misc", "decimal.Decimal"} <= modules
    assert module_knows("def broken(:\n") == (frozenset(), frozenset())


def test_at_hand_keeps_what_the_module_already_knows(tmp_path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "orders.py").write_text(
        "import json\nfrom app import text\nfrom decimal import Decimal\n"
        "def normalize(s): ...\n", encoding="utf-8")
    items = [("internal_dependency", False, "`f` should reuse `normalize` from `app/orders.py`."),
             ("internal_dependency", False, "`f` should reuse `strip` from `app/text.py`."),
             ("internal_dependency", False, "`f` should reuse `clean` from `app/other.py`."),
             ("external_dependency", False, "`f` needs `Decimal` from the `decimal` module."),
             ("external_dependency", False, "`f` needs `loads` from the `json` module."),
             ("external_dependency", False, "`f` needs `sqrt` from the `math` module."),
             ("function_location", False, "`f` belongs in `app/orders.py`.")]
    sample = _sample(*items)
    keep = at_hand(tmp_path)
    assert [keep(sample, i) for i in sample.items] == [True, True, False, True, True, False,
                                                       False]
    gone = _sample(*items, path="app/missing.py")
    assert not any(at_hand(tmp_path)(gone, i) for i in gone.items)


def test_a_voice_does_not_change_what_is_at_hand(tmp_path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "orders.py").write_text("import json\n", encoding="utf-8")
    built = "`f` needs `loads` from the `json` module."
    item = Item("s1-0", "external_dependency", "f should lean on json's loads", truth=False,
                as_built=built)
    assert at_hand(tmp_path)(_sample(), item)


def test_on_the_demo_the_module_lowers_the_floor() -> None:
    samples = [s for o in load_outlines(DEMO / "outlines") for s in o.samples]
    every = stale_floor(samples)
    known = stale_floor(samples, at_hand(DEMO / "inventory"))
    assert 0.0 < known < every < 1.0
