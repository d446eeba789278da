"""Outlines load and validate; the template mock user is deterministic and complete."""

from __future__ import annotations

import json

import pytest

from replay.locoeval.mockuser import TemplateUser
from replay.locoeval.outline import (
    OutlineError,
    load_outline,
    load_outlines,
    parse_outline,
    validate_rules,
)
from tests.replay.conftest import OUTLINE as OUTLINE_COPY


def test_outline_loads_with_samples_topics_tasks(outline_file):
    outline = load_outline(outline_file)
    assert outline.id == "shop-2" and outline.subset == "multi-hop"
    assert [s.function for s in outline.samples] == ["with_tax", "Cart.total"]
    assert [q.id for q in outline.queries()] == ["q1", "q2", "q3", "q4", "q5", "q6", "q7"]
    assert outline.sample("s2").tests[0] == "tests/test_cart.py::test_empty_cart_costs_nothing"
    assert validate_rules(outline) == []
    assert [o.id for o in load_outlines(outline_file.parent)] == ["shop-2"]


@pytest.mark.parametrize(("path", "message"), [
    (("samples", 0, "namespace"), "missing 'namespace'"),
    (("samples", 0, "items", 0, "type"), "missing 'type'"),
])
def test_missing_fields_are_named(outline_data, path, message):
    node = outline_data
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    with pytest.raises(OutlineError, match=message):
        parse_outline(outline_data)


def test_unknown_items_types_and_samples_are_refused(outline_data):
    bad = json.loads(json.dumps(outline_data))
    bad["topics"][0]["queries"][0]["contains"] = ["nope"]
    with pytest.raises(OutlineError, match="unknown items"):
        parse_outline(bad)
    bad = json.loads(json.dumps(outline_data))
    bad["samples"][0]["items"][0]["type"] = "vibes"
    with pytest.raises(OutlineError, match="not one of"):
        parse_outline(bad)
    bad = json.loads(json.dumps(outline_data))
    bad["tasks"]["generate"]["s9"] = "write it"
    with pytest.raises(OutlineError, match="unknown samples"):
        parse_outline(bad)


def test_extra_fields_are_tolerated(outline_data):
    outline_data["generator"] = {"name": "someone else's builder"}
    outline_data["samples"][0]["difficulty"] = "hard"
    assert parse_outline(outline_data).id == "shop-2"


def test_dispersion_rules_catch_a_distractor_after_the_truth(outline_data):
    queries = outline_data["topics"][0]["queries"]
    queries[1]["contains"] = []  # move the stale tax rate after the true one
    outline_data["topics"][2]["queries"][3]["contains"] = ["s1-tax", "s2-empty", "s1-tax-old"]
    problems = validate_rules(parse_outline(outline_data))
    assert problems == ["s1/tax: distractor s1-tax-old not before the truth"]


def test_template_user_is_byte_identical_for_a_seed_and_renders_every_item(outline_file):
    outline = load_outline(outline_file)
    first = TemplateUser(outline, seed=7).conversation()
    again = TemplateUser(load_outline(outline_file), seed=7).conversation()
    assert [t for _, t in first] == [t for _, t in again]
    assert any(TemplateUser(outline, seed=s).conversation() != first for s in range(1, 6))
    items = outline.items
    for query, text in first:
        for item_id in query.contains:
            assert items[item_id].text in text
        if query.summary and not query.recap:
            assert query.summary in text
    assert "`shop/prices.py::with_tax`" in first[0][1]


def test_rule_two_keeps_the_versions_of_a_unit_in_distinct_queries(outline_data):
    # the stale tax rate asked together with the true one, in one query
    outline_data["topics"][0]["queries"][1]["contains"] = ["s1-tax-old", "s1-tax"]
    problems = validate_rules(parse_outline(outline_data))
    assert "query q2: s1-tax-old and s1-tax are both of unit tax" in problems
    # units are per sample: s1's and s2's "loc" units may share a query
    data = json.loads(json.dumps(OUTLINE_COPY))
    data["topics"][0]["queries"][0]["contains"] = ["s1-loc", "s2-loc"]
    data["topics"][2]["queries"][0]["contains"] = ["s2-empty-old"]
    assert validate_rules(parse_outline(data)) == []


def test_prerequisites_are_asked_first_and_form_a_dag(outline_data):
    items = outline_data["samples"][0]["items"]
    items[0]["prereqs"] = ["dep"]  # the location (asked in q1) needs the dependency (q5)
    assert validate_rules(parse_outline(outline_data)) == [
        "s1/loc: asked before its prerequisite dep"]
    items[1]["prereqs"] = ["loc"]
    assert "s1: prerequisites form a cycle" in validate_rules(parse_outline(outline_data))
    items[0]["prereqs"], items[1]["prereqs"] = [], ["nowhere"]
    assert validate_rules(parse_outline(outline_data)) == [
        "s1/dep: unknown prerequisite nowhere"]
