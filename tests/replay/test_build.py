"""The outline builder and the bundled demo benchmark."""

from __future__ import annotations

import json

import pytest

from replay.build import build_outline, build_outlines, load_targets
from replay.cli import DEMO
from replay.outline import load_outlines, parse_outline, validate_rules
from replay.prepare import stub_function
from replay.sandbox import Limits, Sandbox

REPO = DEMO / "inventory"
TARGETS = load_targets(DEMO / "targets.json")


@pytest.mark.parametrize("seed", range(12))
def test_outlines_validate_and_keep_the_dispersion_rules(seed):
    for data in build_outlines(REPO, TARGETS, 3, seed):
        outline = parse_outline(json.loads(json.dumps(data)))
        assert validate_rules(outline) == []
        assert 30 <= len(outline.queries()) <= 70
        order = [i for q in outline.queries() for i in q.contains]
        for sample in outline.samples:
            # every item is asked somewhere; units appear in the order the sample lists them
            units = [sample.items[0].unit]
            for item in sample.items:
                assert item.id in order
                if item.unit != units[-1]:
                    units.append(item.unit)
            first = {}
            for item_id in order:
                unit = outline.items[item_id].unit
                if unit.startswith(sample.id + ":"):
                    first.setdefault(unit, len(first))
            assert sorted(first, key=first.get) == units
        kinds = [t.kind for t in outline.topics]
        assert "noise" in kinds and kinds.count("task") >= len(outline.samples)


def test_same_seed_same_outlines_and_another_seed_differs():
    a = build_outlines(REPO, TARGETS, 4, seed=3)
    assert a == build_outlines(REPO, TARGETS, 4, seed=3)
    assert a != build_outlines(REPO, TARGETS, 4, seed=4)


def test_static_analysis_items_are_right():
    target = next(t for t in TARGETS if t.qualname == "order_total")
    data = build_outline(REPO, [target], "x", 0)
    items = {(i["type"], i["truth"]): i for i in data["samples"][0]["items"]}
    assert items[("function_location", True)]["locations"] == [
        "inventory/orders.py::order_total"]
    assert items[("function_location", False)]["locations"] != [
        "inventory/orders.py::order_total"]
    assert items[("parameter_list", True)]["text"] == "`order_total` takes (lines, prices)."
    internal = {i["locations"][0] for i in data["samples"][0]["items"]
                if i["type"] == "internal_dependency"}
    assert {"inventory/money.py::parse_price", "inventory/text.py::normalize_sku"} <= internal
    external = [i["text"] for i in data["samples"][0]["items"]
                if i["type"] == "external_dependency"]
    assert external == ["`order_total` needs `Decimal` from the `decimal` module."]
    stale = items[("logical_constraint", False)]["text"]
    assert "never raises" in stale and "raises InventoryError" in \
        items[("logical_constraint", True)]["text"]


def test_builder_cli_writes_loadable_outlines(tmp_path):
    from replay.cli import main

    assert main(["build", str(REPO), "--targets", str(DEMO / "targets.json"),
                 "--out", str(tmp_path), "--count", "3", "--seed", "9"]) == 0
    outlines = load_outlines(tmp_path)
    assert [len(o.samples) for o in outlines] == [1, 2, 3]
    assert (tmp_path / outlines[0].repo).resolve() == REPO.resolve()


def test_the_bundled_benchmark():
    outlines = load_outlines(DEMO / "outlines")
    assert len(outlines) >= 8
    assert {o.subset for o in outlines} == {"single-hop", "multi-hop"}
    assert {len(o.samples) for o in outlines} == {1, 2, 3}
    for outline in outlines:
        assert validate_rules(outline) == []
        assert (DEMO / "outlines" / outline.repo).resolve() == REPO.resolve()
    assert len(TARGETS) >= 8


def test_the_demo_repository_tests_are_real():
    """They pass on the repository, and each fails once its target is stubbed."""
    limits = Limits(timeout=60.0)
    with Sandbox(REPO, limits=limits) as box:
        assert box.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]).ok
        for target in TARGETS:
            original = box.read(target.path)
            box.write(target.path, stub_function(original, target.qualname))
            assert not box.pytest(target.tests[0]).ok, target
            box.write(target.path, original)
