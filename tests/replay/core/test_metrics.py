"""The metrics against hand-computed values; the judges; the report's tables."""

from __future__ import annotations

import io
import json
from math import comb

import pytest
from rich.console import Console

from memory.llm.client import LLM, LLMConfig
from replay.core.metrics import compression, f1, iterative, normalized, pass_at_k, set_f1
from replay.locoeval.judge import (
    VERDICT_SCHEMA,
    EmbedJudge,
    LLMJudge,
    answer_lines,
    judge_accuracy,
    verdict_schema,
)
from replay.locoeval.matcher import (
    EmbedMatcher,
    _quoted,
    about,
    context_metrics,
    flat,
    restated,
)
from replay.locoeval.outline import parse_outline
from replay.reporting.report import summarize, table
from tests.replay.conftest import OUTLINE


def test_f1_hand_computed_and_edge_cases():
    s = f1(["a", "b", "c"], ["b", "c", "d", "e"])  # P 2/3, R 2/4
    assert s.precision == pytest.approx(2 / 3) and s.recall == 0.5
    assert s.f1 == pytest.approx(4 / 7)
    assert f1([], []).f1 == 1.0
    assert f1(["a"], []).f1 == 0.0 and f1([], ["a"]).f1 == 0.0
    assert f1(["x"], ["y"]).f1 == 0.0
    assert f1(["a", "a"], ["a"]).f1 == 1.0  # duplicates count once


def test_set_f1_is_any_match_not_one_to_one():
    # LoCoEval: |Pred ∩ Gt| / |Pred| counts every prediction that matches some true item,
    # |Gt ∩ Pred| / |Gt| every true item some prediction matches.
    both_say_t0 = set_f1(2, 2, [(0, 0), (1, 0)])
    assert both_say_t0.precision == 1.0 and both_say_t0.recall == 0.5  # one-to-one: P = 0.5
    one_says_all = set_f1(1, 3, [(0, 0), (0, 1), (0, 2)])
    assert one_says_all.precision == 1.0 and one_says_all.recall == 1.0  # one-to-one: R = 1/3
    assert set_f1(3, 2, [(0, 1), (1, 1), (1, 0), (7, 0)]).precision == pytest.approx(2 / 3)
    assert set_f1(0, 0, []).f1 == 1.0 and set_f1(2, 0, []).f1 == 0.0


@pytest.mark.parametrize(("n", "c", "k"), [(10, 3, 1), (10, 3, 5), (5, 0, 2), (20, 7, 10)])
def test_pass_at_k_matches_the_closed_form(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_pass_at_k_edges():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 2, 3) == 1.0  # fewer than k failures: always a pass
    assert pass_at_k(3, 0, 1) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_normalized_is_a_percentage_and_compression_is_full_over_backend():
    assert normalized(0.5, empty=0.2, oracle=0.8) == pytest.approx(50.0)
    assert normalized(0.1, empty=0.2, oracle=0.8) == pytest.approx(-100 / 6)
    assert normalized(0.5, 0.3, 0.3) is None
    assert compression(250, 1000) == pytest.approx(4.0)  # 4x less context than full
    assert compression(1000, 1000) == 1.0 and compression(0, 1000) is None


def test_ia_ca_ifr_on_a_three_turn_case():
    tests = [["t1a", "t1b"], ["t2"], ["t3a", "t3b"]]
    passed = [{"t1a", "t1b"}, {"t1a", "t2"}, {"t1a", "t1b", "t3a"}]
    follow = iterative(tests, passed)
    assert [f.ia for f in follow] == [1.0, 1.0, 0.0]
    assert [f.ca for f in follow] == pytest.approx([1.0, 2 / 3, 3 / 5])
    assert [f.ifr for f in follow] == pytest.approx([0.0, 0.5, 1 / 3])


def test_answer_lines_takes_list_items_not_the_preamble():
    answer = ("Here is what we settled about `with_tax`:\n\n- It lives in shop/prices.py.\n"
              "2. The tax rate is TAX,\n   twenty percent.\n* **Rounds with round_cents.**\n\n"
              "```python\n- not an item\n```\nHope this helps!")
    assert answer_lines(answer) == ["It lives in shop/prices.py.",
                                    "The tax rate is TAX, twenty percent.",
                                    "Rounds with round_cents."]
    assert answer_lines("first fact\n\nsecond fact\n```\ncode\n```") == ["first fact",
                                                                          "second fact"]
    assert answer_lines("") == []


TRUE = "For `order_total`: A SKU without a price raises InventoryError."
STALE = "For `order_total`: A SKU without a price never raises InventoryError."
REUSE_A = "`order_total` should reuse `parse_price` from `inventory/money.py`."
REUSE_B = "`order_total` should reuse `quantize_cents` from `inventory/money.py`."


def test_matcher_tells_a_truth_from_its_distractor(embedder):
    matcher = EmbedMatcher(embedder)
    # cosine alone cannot: both are far above the threshold
    plain = EmbedMatcher(embedder).relation([STALE], [TRUE])
    assert plain == {(0, 0)}
    assert matcher.relation([STALE], [TRUE], [[STALE]]) == set()
    assert matcher.relation([restated(TRUE)], [TRUE], [[STALE]]) == {(0, 0)}
    assert matcher.relation([restated(STALE)], [TRUE], [[STALE]]) == set()
    # the nearest reference only: "reuse parse_price" is not also "reuse quantize_cents"
    assert matcher.relation([REUSE_A], [REUSE_A, REUSE_B]) == {(0, 0)}


def test_a_statement_quoting_an_item_word_for_word_matches_that_item_only(embedder):
    # MiniLM hardly sees word order: wrapped in quotes and a turn mark, the true parameter
    # list lies nearer to its swapped rival than to itself
    true, swapped = "`peekn` takes (n, seq).", "`peekn` takes (seq, n)."
    longer = "`partition` takes (n, seq, pad=no_pad, strict=False)."
    short = "`partition` takes (n, seq, pad=no_pad)."
    matcher = EmbedMatcher(embedder)
    said = [f'"{true}" (turn:33)', f"- {swapped.upper()}", f"{short} (turn:4)"]
    found = matcher.relation(said, [true, swapped, short, longer],
                             [[swapped], [true], [longer], [short]])
    # the quote decides, case and spacing aside
    assert found == {(0, 0), (1, 1), (2, 2)}
    # a hedge or a dump quotes several versions: the quotes decide nothing (the cosine
    # rule does, as for any statement); a longer text quoted holds a shorter one
    forms = {t: flat(t) for t in (true, swapped, "`f` raises ValueError.",
                                  "Round prices to cents")}
    for both in (f"Either {swapped} or {true}", f"{swapped} {true}"):
        assert _quoted(both, forms) is None
    assert _quoted("`f` raises ValueError. Always.", forms) == "`f` raises ValueError."
    assert _quoted("Round prices to centimes", forms) is None  # whole words only
    assert _quoted("Always round prices to cents!", forms) == "Round prices to cents"
    # a statement quoting a rival (or another sample's item) matches no reference
    assert matcher.relation([f"Note: {swapped}"], [true], [[swapped]]) == set()
    assert matcher.relation([f"Note: {swapped}"], [true], decoys=[swapped]) == set()


async def test_embed_judge_bound_to_an_outline_rejects_stale_predictions(embedder):
    outline = parse_outline(OUTLINE)
    judge = EmbedJudge(embedder).for_outline(outline)
    truth = [i.text for i in outline.sample("s2").items if i.truth]
    right = await judge.score_async(["An empty cart costs 0.0."], truth)
    stale = await judge.score_async(["An empty cart raises ValueError."], truth)
    assert right.precision == 1.0 and stale.precision == 0.0
    check = await judge_accuracy(judge, outline)
    assert check["checks"] == 8 and check["accuracy"] == 1.0  # 2 pairs x 2 forms x 2
    unbound = await judge_accuracy(EmbedJudge(embedder, threshold=0.5), outline)
    assert unbound["accuracy"] == 1.0  # the rival rule, not the threshold, does the work


def verdict(*pairs: tuple[int, int]) -> str:
    return json.dumps({"matches": [{"prediction": p, "reference": r} for p, r in pairs]})


def test_verdict_schema_is_strict_mode_ready():
    def walk(node):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert set(node["required"]) == set(node["properties"])
            for child in node["properties"].values():
                walk(child)
        if node.get("type") == "array":
            walk(node["items"])
    walk(VERDICT_SCHEMA)
    walk(verdict_schema(3, 2))
    pair = verdict_schema(3, 2)["properties"]["matches"]["items"]["properties"]
    assert pair["prediction"]["enum"] == [0, 1, 2] and pair["reference"]["enum"] == [0, 1]


async def test_llm_judge_scores_any_match_and_counts_parse_failures(script, embedder):
    judge = LLMJudge(LLM(LLMConfig(model="scripted/j", structured="prompt")),
                     EmbedJudge(embedder))
    script.push(verdict((0, 1), (1, 1), (1, 0)))
    scores = await judge.score_async(["a", "b", "c"], ["x", "y"])
    assert scores.precision == pytest.approx(2 / 3) and scores.recall == 1.0
    assert "P2: c" in script.calls[-1][-1]["content"] and judge.parse_failures == 0
    script.push("no idea", "still no idea")  # the corrective retry fails too
    fallback = await judge.score_async(["The tax rate is ten percent."],
                                       ["The tax rate is ten percent."])
    assert fallback.f1 == 1.0  # the embedding judge stood in
    assert judge.stats() == {"calls": 2, "parse_failures": 1, "errors": 0, "fallbacks": 1}


async def test_llm_judge_is_shown_superseded_versions(script, embedder):
    outline = parse_outline(OUTLINE)
    judge = LLMJudge(LLM(LLMConfig(model="scripted/j", structured="prompt")),
                     EmbedJudge(embedder)).for_outline(outline)
    script.push(verdict())
    await judge.score_async(["An empty cart raises ValueError."], ["An empty cart costs 0.0."])
    prompt = script.calls[-1][-1]["content"]
    assert "SUPERSEDED, not a match: An empty cart raises ValueError." in prompt


def test_context_metrics_use_the_matcher_not_exact_text(embedder):
    from memory.types import ContextPack, Section

    sample = parse_outline(OUTLINE).sample("s2")
    paraphrased = ContextPack("q", [
        Section("memory", "m1", "- Cart.total is a method of shop/cart.py", 9),
        Section("memory", "m2", "- an empty cart costs 0.0", 6),
        Section("memory", "m3", "- Empty carts raise ValueError", 5)])
    recall, stale = context_metrics(EmbedMatcher(embedder), sample, paraphrased)
    assert recall == 1.0 and stale == pytest.approx(1 / 3)
    none = context_metrics(EmbedMatcher(embedder), sample,
                           ContextPack("q", [Section("repo", "x", "def f():\n    pass", 4)]))
    assert none == (0.0, 0.0)


def test_context_metrics_need_a_shared_word_and_the_function_named_for_a_relation(embedder):
    """Seen on isodate and w3lib: a cards label "Scope: `f`" counted as "`f` takes (dt).",
    a code card's "read time_isoformat before calling it" as "`duration_isoformat` should
    reuse `time_isoformat`", and a lead line "Libraries `f` needs." as "`f` needs
    `ParseResult` ...", none naming what the item says."""
    from memory.types import ContextPack, Section
    from replay.locoeval.outline import Item, Sample

    params = (Item("p1", "parameter_list", "`tz_isoformat` takes (dt).", truth=False,
                   unit="params"),
              Item("p2", "parameter_list", '`tz_isoformat` takes (dt, format="%Z").',
                   unit="params"))
    reuse = (Item("d1", "internal_dependency", "`duration_isoformat` should reuse "
                  "`time_isoformat` from `src/isodate/isotime.py`.", truth=False, unit="dep"),
             Item("d2", "internal_dependency", "`duration_isoformat` should reuse "
                  "`strftime` from `src/isodate/isostrf.py`.", unit="dep"))

    def metrics(items, *texts):
        name = items[0].text.split("`")[1]
        sample = Sample("s", f"src.isodate.x.{name}", "src/isodate/x.py", "", (), items)
        pack = ContextPack("q", [Section("memory", f"m{n}", t, 9) for n, t in enumerate(texts)])
        return context_metrics(EmbedMatcher(embedder), sample, pack)

    matcher = EmbedMatcher(embedder)
    label = "Scope: tz_isoformat"
    rivals = [[params[1].text], [params[0].text]]
    assert matcher.relation([label], [i.text for i in params], rivals) == {(0, 0)}  # cosine
    assert metrics(params, label) == (0.0, 0.0)
    assert metrics(params, "- tz_isoformat's arguments: dt, format '%Z'") == (1.0, 0.0)
    hint = "Action hint: read src/isodate/isotime.py::time_isoformat before calling it"
    rivals = [[reuse[1].text], [reuse[0].text]]
    assert matcher.relation([hint], [i.text for i in reuse], rivals) == {(0, 0)}
    assert metrics(reuse, hint) == (0.0, 0.0)
    assert metrics(reuse, f"For `duration_isoformat`:\n{hint}") == (0.0, 1.0)
    # one section naming the function somewhere: only what stands under its heading counts
    summary = f"## `duration_isoformat`\n- writes ISO durations\n## `time_isoformat`\n- {hint}"
    assert metrics(reuse, summary) == (0.0, 0.0)
    # a lead line naming the function and the frame, but no dependency
    lead = "Another thing: Libraries `duration_isoformat` needs."
    needs = (Item("e1", "external_dependency", "`duration_isoformat` needs `ParseResult` "
                  "from the `urllib.parse` module.", truth=False, unit="ext"),
             Item("e2", "external_dependency", "`duration_isoformat` needs `Decimal` from "
                  "the `decimal` module.", unit="ext"))
    rivals = [[needs[1].text], [needs[0].text]]
    assert matcher.relation([lead], [i.text for i in needs], rivals)  # the cosine alone
    assert metrics(needs, lead) == (0.0, 0.0)
    assert metrics(needs, "- duration_isoformat: Decimal, from decimal") == (1.0, 0.0)
    # a method: neither word of `Money.charge` is shared; a file named like the function
    # is its place only by its whole name
    method = (Item("m1", "parameter_list", "`Money.charge` takes (self).", truth=False,
                   unit="params"),
              Item("m2", "parameter_list", "`Money.charge` takes (self, amount).",
                   unit="params"))
    sample = Sample("s", "src.isodate.x.Money.charge", "src/isodate/x.py", "", (), method)
    pack = ContextPack("q", [Section("memory", "m", "Scope: `Money.charge`", 4)])
    assert context_metrics(matcher, sample, pack) == (0.0, 0.0)
    where = (Item("l1", "function_location", "`tz_isoformat` belongs in `src/tz_isoformat.py`.",
                  truth=False, unit="loc"),
             Item("l2", "function_location", "`tz_isoformat` belongs in `src/isotzinfo.py`.",
                  unit="loc"))
    assert metrics(where, "`tz_isoformat` belongs in the src folder") == (0.0, 0.0)
    assert metrics(where, "- `tz_isoformat` goes into src/tz_isoformat.py") == (0.0, 1.0)
    # seen on validators (`cron` in cron.py): a file named like the function does not make
    # the code of its other functions, under their path headers, statements about it
    code = ContextPack("q", [Section(
        "repo", "r", "# src/isodate/duration_isoformat.py::time_isoformat\n"
        "def time_isoformat(t):\n    return t.isoformat()", 9)])
    sample = Sample("s", "src.isodate.duration_isoformat.duration_isoformat",
                    "src/isodate/duration_isoformat.py", "", (), reuse)
    assert context_metrics(matcher, sample, code) == (0.0, 0.0)
    own = ContextPack("q", [Section(
        "repo", "r", "# src/isodate/duration_isoformat.py::duration_isoformat\n"
        "def duration_isoformat(d):\n    return strftime(d)", 9)])
    assert about(own.sections[0].text, "duration_isoformat")


def pair(backend, source, subset, k, *, passed, extract, topic, prompt, recall=0.5):
    return {"backend": backend, "source": source, "subset": subset, "k": k, "error": None,
            "usage": {"answer": {"prompt_tokens": prompt, "completion_tokens": 10}},
            "scores": {"topic_f1": topic, "extract_f1": {"s1": extract},
                       "passed": {"s1": passed}, "recall": {"s1": recall}, "stale": {"s1": 0.0}},
            "judge_check": {"checks": 4, "correct": 4, "judge": "embed"}}


def test_report_normalizes_with_oracle_f1_by_definition_and_splits():
    pairs = []
    for source, subset, k in (("a", "single-hop", 1), ("b", "multi-hop", 2)):
        pairs += [pair("oracle", source, subset, k, passed=True, extract=0.8, topic=0.5,
                       prompt=200),
                  pair("empty", source, subset, k, passed=False, extract=0.2, topic=0.0,
                       prompt=100),
                  pair("full", source, subset, k, passed=True, extract=0.6, topic=0.5,
                       prompt=1000),
                  pair("rag", source, subset, k, passed=source == "a", extract=0.4,
                       topic=0.25, prompt=250)]
    summary = summarize(pairs)
    rows = summary["backends"]
    assert rows["oracle"]["extract_f1"] == 1.0 and rows["oracle"]["extract_f1_measured"] == 0.8
    assert rows["rag"]["normalized_extract_f1"] == pytest.approx(100 * 0.2 / 0.8)  # not /0.6
    assert rows["rag"]["normalized_pass@1"] == pytest.approx(50.0)
    assert rows["rag"]["compression"] == pytest.approx(4.0)
    assert rows["full"]["prompt_tokens"] == 1000 and rows["full"]["completion_tokens"] == 10
    assert summary["by_subset"]["multi-hop"]["rag"]["normalized_pass@1"] == 0.0
    assert summary["by_k"]["1"]["rag"]["normalized_pass@1"] == 100.0
    assert summary["judge_check"]["accuracy"] == 1.0 and summary["judge_check"]["checks"] == 8
    out = io.StringIO()
    Console(file=out, width=260).print(table(summary))
    text = out.getvalue()
    for header in ("pass@1 ↑", "norm. pass@1 ↑", "ctx stale ↓", "compression ↑",
                   "prompt tok ↓", "by subset", "by k", "multi-hop · rag"):
        assert header in text
    assert "4.0×" in text and "1 (0.80)" in text and "50%" in text
    assert "judge accuracy on the outlines' truth/distractor pairs ↑: 1.00 (8/8" in text
