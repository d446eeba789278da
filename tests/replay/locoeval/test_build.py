"""The outline builder (LoCoEval 3.1.2-3.1.4) as properties over many seeds, the grid,
sample selection (3.1.1), and the bundled demo benchmark."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from replay.locoeval import DEMO
from replay.locoeval._analyse import BuildError
from replay.locoeval._select import BuildRun, check_target
from replay.locoeval.build import (
    L_BINS,
    build_outline,
    build_outlines,
    grid_plan,
    load_targets,
    repo_facts,
    true_units,
)
from replay.locoeval.outline import load_outlines, parse_outline, validate_rules
from replay.locoeval.prepare import prepared_copy, remove_function
from replay.sandbox.sandbox import Limits, Sandbox
from tests.conftest import make_repo
from tests.replay.conftest import SHOP_FILES

REPO = DEMO / "inventory"
TARGETS = load_targets(DEMO / "targets.json")
FACTS = repo_facts(REPO)


def _units(outline):
    """(sample id, unit) -> items of the unit, in the order the sample lists them."""
    out: dict = {}
    for sample in outline.samples:
        for item in sample.items:
            out.setdefault((sample.id, item.unit), []).append(item)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_builder_rules_hold_for_every_seed(seed):
    for data in build_outlines(REPO, TARGETS, 16, seed, grid=True):
        outline = parse_outline(json.loads(json.dumps(data)))
        assert validate_rules(outline) == [], outline.id  # rule 1, rule 2, prerequisites
        queries = outline.queries()
        assert 30 <= len(queries) < 70
        where = {}
        for n, query in enumerate(queries):
            for item_id in query.contains:
                where.setdefault(item_id, n)
        units = _units(outline)
        for (sid, unit), items in units.items():
            stale = [i for i in items if not i.truth]
            true = [i for i in items if i.truth]
            assert len(true) == 1 and len(stale) <= 3, unit
            # distractors precede the true item, each in a query of its own
            assert len({where[i.id] for i in items}) == len(items)
            assert all(where[i.id] < where[true[0].id] for i in stale)
            for need in items[0].prereqs:  # prerequisites asked no later than the unit
                assert min(where[i.id] for i in units[(sid, need)]) <= where[items[0].id]
        for sample in outline.samples:
            mutated = {u for (s, u), items in units.items()
                       if s == sample.id and any(not i.truth for i in items)}
            truths = [u for (s, u) in units if s == sample.id]
            assert len(mutated) == len(truths) // 2  # a random half of the true items
        # the subset from the number of topics per sample
        hops = Counter(t.sample for t in outline.topics if t.kind == "task")
        if outline.subset == "single-hop":
            assert set(hops.values()) == {1}
        else:
            assert set(hops.values()) <= {2, 3}
            for a, b in zip(outline.topics, outline.topics[1:], strict=False):
                assert not (a.kind == b.kind == "task" and a.sample == b.sample)
        noise = [t for t in outline.topics if t.kind == "noise"]
        assert noise
        about = [t.queries[0].keys[0].key for t in noise]
        assert len(about) == len(set(about))  # no duplicate noise topic
        assert len(data["tasks"]["topics"]) == len(set(data["tasks"]["topics"]))
        for topic in outline.topics:
            assert not topic.queries[0].recap  # a recap is never first in its topic
        assert sum(q.recap for q in queries) >= len(outline.samples)


def test_every_item_type_is_mutated_somewhere_and_distractors_point_at_real_places():
    kinds = Counter()
    real = {f.location for f in FACTS.functions} | set(FACTS.files)
    for seed in range(10):
        for data in build_outlines(REPO, TARGETS, 16, seed, grid=True):
            for sample in data["samples"]:
                for item in sample["items"]:
                    if item["truth"]:
                        continue
                    kinds[item["type"]] += 1
                    if item["type"] in ("function_location", "internal_dependency"):
                        assert item["locations"] and set(item["locations"]) <= real
                        assert sample["namespace"] not in item["text"]
    assert set(kinds) == {"function_location", "parameter_list", "core_functionality",
                          "logical_constraint", "internal_dependency", "external_dependency"}


def test_noise_is_written_from_the_repository():
    data = build_outlines(REPO, TARGETS, 4, seed=5)[0]
    real = {f.location for f in FACTS.functions} | set(FACTS.files)
    targets = {s["path"] + "::" + s["namespace"].rsplit(".", 1)[-1] for s in data["samples"]}
    for topic in data["topics"]:
        if topic["kind"] == "noise":
            keys = {k["key"] for q in topic["queries"] for k in q["keys"]}
            assert len(keys) == 1 and keys <= real and not keys & targets
            assert all(next(iter(keys)).split("::")[-1] in q["summary"]
                       or next(iter(keys)) in q["summary"] for q in topic["queries"])


def test_the_grid_is_even():
    plan = grid_plan()
    assert len(plan) == 16
    assert Counter(k for _, k, _ in plan) == {1: 4, 2: 4, 3: 4, 4: 4}
    assert Counter(b for b, _, _ in plan) == dict.fromkeys(L_BINS, 4)
    assert Counter((k, s) for _, k, s in plan) == {(k, s): 2 for k in range(1, 5)
                                                   for s in ("single-hop", "multi-hop")}
    outlines = build_outlines(REPO, TARGETS, 16, seed=2, grid=True)
    for data, ((low, high), k, subset) in zip(outlines, plan, strict=True):
        assert len(data["samples"]) == k and data["subset"] == subset
        assert low <= sum(len(t["queries"]) for t in data["topics"]) < high


def test_same_seed_same_outlines_and_another_seed_differs():
    a = build_outlines(REPO, TARGETS, 4, seed=3)
    assert a == build_outlines(REPO, TARGETS, 4, seed=3)
    assert a != build_outlines(REPO, TARGETS, 4, seed=4)


def test_static_analysis_items_are_right():
    target = next(t for t in TARGETS if t.qualname == "order_total")
    data = build_outline(REPO, [target], "x", 0, facts=FACTS)
    truths = {i["type"]: i for i in data["samples"][0]["items"] if i["truth"]}
    assert truths["function_location"]["locations"] == ["inventory/orders.py::order_total"]
    assert truths["parameter_list"]["text"] == "`order_total` takes (lines, prices)."
    internal = {i["locations"][0] for i in data["samples"][0]["items"]
                if i["type"] == "internal_dependency" and i["truth"]}
    assert {"inventory/money.py::parse_price", "inventory/text.py::normalize_sku"} <= internal
    assert "raises InventoryError" in truths["logical_constraint"]["text"]
    external = [i["text"] for i in data["samples"][0]["items"]
                if i["type"] == "external_dependency" and i["truth"]]
    assert external == ["`order_total` needs `Decimal` from the `decimal` module."]


def test_no_true_item_is_in_the_agents_copy(tmp_path):
    """The leak: every true item's text (and a stated requirement's sentence) is absent
    from the prepared copy of each demo outline."""
    for outline in load_outlines(DEMO / "outlines"):
        copy = prepared_copy(REPO, [(s.path, s.function, s.tests) for s in outline.samples],
                             tmp_path / outline.id)
        text = " ".join(" ".join(p.read_text().split()) for p in copy.rglob("*")
                        if p.is_file() and ".git" not in p.parts).casefold()
        for sample in outline.samples:
            for item in sample.items:
                if not item.truth:
                    continue
                assert " ".join(item.text.split()).casefold() not in text, item
                claim = item.text.split(": ", 1)[-1]
                if item.type in ("core_functionality", "logical_constraint"):
                    for sentence in claim.split(". "):
                        assert " ".join(sentence.split()).casefold() not in text, item


def build_shop(tmp_path, files, embedder):
    """``engram replay build`` of a shop repository with ``files``, targets `with_tax` and
    `Cart.total`; its report."""
    repo = make_repo(tmp_path / "shop", files)
    targets = [t for t in load_targets_from(tmp_path, {
        "shop/prices.py::with_tax": ["tests/test_prices.py::test_with_tax"],
        "shop/cart.py::Cart.total": ["tests/test_cart.py::test_total_with_tax"]})]
    return BuildRun(repo, targets, tmp_path / "out", seed=1, count=1).run(embedder)


def test_sample_selection_keeps_the_demo_targets_and_drops_a_solvable_one(tmp_path, embedder):
    files = dict(SHOP_FILES)
    files["shop/legacy.py"] = (  # the answer sits in the repository under another name
        '"""Old pricing, kept for the reports."""\nfrom shop.rounding import round_cents\n\n'
        "TAX = 0.2\n\n\ndef with_tax(amount):\n"
        '    """Return the amount with tax added, rounded to cents."""\n'
        "    return round_cents(amount * (1 + TAX))\n")
    report = build_shop(tmp_path, files, embedder)
    dropped = {d["location"]: d for d in report["dropped"]}
    assert list(dropped) == ["shop/prices.py::with_tax"]
    assert "solvable from the repository alone" in dropped["shop/prices.py::with_tax"]["reason"]
    assert dropped["shop/prices.py::with_tax"]["recall"] >= 0.5
    saved = json.loads((tmp_path / "out" / "build-report.json").read_text())
    assert saved["kept"] == 1 and saved["dropped"][0]["location"] == "shop/prices.py::with_tax"
    outline = load_outlines(tmp_path / "out")[0]
    assert [s.function for s in outline.samples] == ["Cart.total"]
    facts = repo_facts(REPO)  # the demo's targets are not in their own repository
    from replay.locoeval._analyse import analyse

    for target in TARGETS:
        info = analyse(REPO, target, facts)
        verdict, _ = check_target(REPO, target, info.signature, true_units(target, info),
                                  embedder, tmp_path / "demo")
        assert verdict.kept, verdict


@pytest.mark.parametrize("why", ["missing", "skipped"])
def test_a_target_whose_tests_cannot_pass_on_the_original_is_dropped(tmp_path, embedder, why):
    """A test needing a package the sandbox does not have fails on the original
    repository too, and a skipped one reports no pass: no answer could pass them, so their
    target is no sample, and the reason names the test."""
    files = dict(SHOP_FILES)
    files["tests/test_prices.py"] = (
        "import not_installed_here\n" + files["tests/test_prices.py"] if why == "missing"
        else files["tests/test_prices.py"].replace(
            "def test_with_tax", "import pytest\n\n\n@pytest.mark.skip(reason='windows only')"
                                 "\ndef test_with_tax"))
    files["shop/legacy.py"] = (  # functions enough for the outline's noise topics
        '"""Old reports."""\n\n\ndef monthly(rows):\n    """Sum rows by month."""\n'
        '    return sum(rows)\n\n\ndef yearly(rows):\n    """Sum rows by year."""\n'
        '    return sum(rows)\n')
    report = build_shop(tmp_path, files, embedder)
    (dropped,) = report["dropped"]
    assert dropped["location"] == "shop/prices.py::with_tax"
    assert dropped["reason"] == (
        "its tests do not pass on the original repository: tests/test_prices.py::test_with_tax "
        "(failed, or skipped or xfail, which could grade no generated function either)" + (
            "; the run's first exception: ModuleNotFoundError: No module named "
            "'not_installed_here'" if why == "missing" else ""))
    assert report["kept"] == 1


def test_a_build_whose_targets_tests_all_fail_stops_with_why(tmp_path, embedder):
    files = dict(SHOP_FILES)
    for test in ("tests/test_prices.py", "tests/test_cart.py"):
        files[test] = "import not_installed_here\n" + files[test]
    with pytest.raises(BuildError, match=r"none of the targets' tests pass .*not_installed_here"):
        build_shop(tmp_path, files, embedder)


def load_targets_from(tmp_path, rows):
    path = tmp_path / "targets.json"
    path.write_text(json.dumps([{"location": k, "tests": v} for k, v in rows.items()]))
    return load_targets(path)


def test_builder_cli_writes_outlines_and_a_report(tmp_path, capsys):
    from replay.cli.command import main

    assert main(["build", str(REPO), "--targets", str(DEMO / "targets.json"),
                 "--out", str(tmp_path), "--count", "4", "--seed", "9"]) == 0
    outlines = load_outlines(tmp_path)
    assert [len(o.samples) for o in outlines] == [1, 2, 3, 4]
    assert (tmp_path / outlines[0].repo).resolve() == REPO.resolve()
    report = json.loads((tmp_path / "build-report.json").read_text())
    assert report["targets"] == len(TARGETS) and len(report["selection"]) == len(TARGETS)
    assert "sample selection:" in capsys.readouterr().out


def test_the_bundled_benchmark():
    outlines = load_outlines(DEMO / "outlines")
    assert len(outlines) >= 16
    assert {(len(o.samples), o.subset) for o in outlines} == {
        (k, s) for k in range(1, 5) for s in ("single-hop", "multi-hop")}
    for outline in outlines:
        assert validate_rules(outline) == []
        assert 30 <= len(outline.queries()) < 70
        assert (DEMO / "outlines" / outline.repo).resolve() == REPO.resolve()
    report = json.loads((DEMO / "outlines" / "build-report.json").read_text())
    assert report["grid"] and report["kept"] >= 4


def test_the_demo_repository_tests_are_real():
    """They pass on the repository, and each fails once its target is removed."""
    limits = Limits(timeout=60.0)
    with Sandbox(REPO, limits=limits) as box:
        assert box.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]).ok
        for target in TARGETS:
            original = box.read(target.path)
            box.write(target.path, remove_function(original, target.qualname))
            assert not box.pytest(target.tests[0]).ok, target
            box.write(target.path, original)


async def test_llm_rewrites_of_distractors_and_their_fallback(script):
    from memory.llm.client import LLM, LLMConfig
    from replay.locoeval._analyse import analyse
    from replay.locoeval._distract import RewriteStats, llm_rewrites

    target = next(t for t in TARGETS if t.qualname == "order_total")
    units = [u for u in true_units(target, analyse(REPO, target, FACTS))
             if u.type in ("core_functionality", "logical_constraint")]
    script.push('{"distractors": ["`order_total` ignores unknown SKUs."]}',
                "not json at all", "still not json")
    stats = RewriteStats()
    got = await llm_rewrites(LLM(LLMConfig(model="scripted/t")), "order_total", units, stats)
    assert got == {units[0].key: ["`order_total` ignores unknown SKUs."]}
    assert stats.asked == 2 and stats.fallbacks == 1  # the second unit: templates
    data = build_outline(REPO, [target], "x", 0, facts=FACTS,
                         rewrites={target.namespace: got})
    stale = [i["text"] for i in data["samples"][0]["items"]
             if not i["truth"] and i["unit"] == f"s1:{units[0].key}"]
    assert not stale or stale[0] == "`order_total` ignores unknown SKUs."


CATALOG = (  # other real functions: the outline's noise topics are written from them
    ("count_items", "Count the items of the catalog", "len(items)"),
    ("cheapest", "The cheapest item of the catalog", "min(items)"),
    ("dearest", "The most expensive item of the catalog", "max(items)"),
    ("names", "The names of the items, sorted", "sorted(items)"),
    ("unique", "The items without duplicates", "list(dict.fromkeys(items))"),
    ("first_item", "The first item, or None when empty", "items[0] if items else None"),
)


def test_sample_selection_with_a_model_drops_a_target_it_writes_from_the_context(
        tmp_path, embedder, script):
    """LoCoEval 3.1.1 with ``--model``: a target the model writes correctly from the top-10
    context alone is dropped with the reason; one whose code fails its tests stays."""
    from tests.replay.conftest import ANSWERS

    catalog = "".join(f'\n\ndef {name}(items):\n    """{doc}."""\n    return {body}\n'
                      for name, doc, body in CATALOG)
    repo = make_repo(tmp_path / "shop", {**SHOP_FILES, "shop/catalog.py": catalog})
    targets = load_targets_from(tmp_path, {
        "shop/prices.py::with_tax": ["tests/test_prices.py::test_with_tax"],
        "shop/cart.py::Cart.total": ["tests/test_cart.py::test_total_with_tax"]})
    prompts: list[str] = []

    def model(messages):
        system, last = messages[0]["content"], messages[-1]["content"]
        if system.startswith("Write the Python function"):  # the generation attempt
            prompts.append(last)
            if "Signature: def with_tax(amount)" in last:
                return ANSWERS["with_tax"]
            return "```python\ndef total(self):\n    return 0.0\n```"  # fails the tax test
        if system.startswith("Say in one or two"):  # core functionality
            return "Computes a value."
        return "not json"  # distractor rewrites: templates

    script.default = model
    report = BuildRun(repo, targets, tmp_path / "out", seed=1, count=1,
                      model="scripted/builder").run(embedder)
    assert len(prompts) == 2  # one attempt per target the reader-free check kept
    assert all("Signature: def " in p and "File: shop/" in p for p in prompts)
    verdicts = {v["location"]: v for v in report["selection"]}
    assert verdicts["shop/prices.py::with_tax"]["generated"] is True
    assert verdicts["shop/cart.py::Cart.total"]["generated"] is False
    dropped = {d["location"]: d for d in report["dropped"]}
    assert list(dropped) == ["shop/prices.py::with_tax"]
    assert dropped["shop/prices.py::with_tax"]["reason"].startswith(
        "generation: the model passes the target's tests")
    assert report["kept"] == 1
    outline = load_outlines(tmp_path / "out")[0]
    assert [s.function for s in outline.samples] == ["Cart.total"]
