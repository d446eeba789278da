"""The metrics against hand-computed values."""

from __future__ import annotations

from math import comb

import pytest

from replay.metrics import (
    compression,
    f1,
    greedy_matches,
    iterative,
    matched_f1,
    normalized,
    pass_at_k,
)


def test_f1_hand_computed_and_edge_cases():
    s = f1(["a", "b", "c"], ["b", "c", "d", "e"])  # P 2/3, R 2/4
    assert s.precision == pytest.approx(2 / 3) and s.recall == 0.5
    assert s.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))  # 4/7
    assert s.f1 == pytest.approx(4 / 7)
    assert f1([], []).f1 == 1.0
    assert f1(["a"], []).f1 == 0.0 and f1([], ["a"]).f1 == 0.0
    assert f1(["x"], ["y"]).f1 == 0.0
    assert f1(["a", "a"], ["a"]).f1 == 1.0  # duplicates count once


def test_greedy_matching_is_one_to_one():
    score = {("p1", "t1"): 0.9, ("p1", "t2"): 0.95, ("p2", "t2"): 0.8, ("p2", "t1"): 0.2}
    pred, truth = ["p1", "p2"], ["t1", "t2"]
    pairs = greedy_matches(pred, truth, lambda i, j: score[(pred[i], truth[j])], threshold=0.5)
    assert pairs == [(0, 1)]  # p1-t2 first; p2-t2 is taken, p2-t1 is below threshold
    assert matched_f1(["p1", "p2"], ["t1", "t2"], len(pairs)).f1 == pytest.approx(0.5)


@pytest.mark.parametrize(("n", "c", "k"), [(10, 3, 1), (10, 3, 5), (5, 0, 2), (20, 7, 10)])
def test_pass_at_k_matches_the_closed_form(n, c, k):
    expected = 1 - comb(n - c, k) / comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_edges():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 2, 3) == 1.0  # fewer than k failures: always a pass
    assert pass_at_k(3, 0, 1) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_normalized_and_compression():
    assert normalized(0.5, empty=0.2, oracle=0.8) == pytest.approx(0.5)
    assert normalized(0.1, empty=0.2, oracle=0.8) == pytest.approx(-1 / 6)
    assert normalized(0.5, 0.3, 0.3) is None
    assert compression(250, 1000) == 0.25 and compression(5, 0) is None


def test_ia_ca_ifr_on_a_three_turn_case():
    tests = [["t1a", "t1b"], ["t2"], ["t3a", "t3b"]]
    passed = [{"t1a", "t1b"},          # turn 1: all of its tests
              {"t1a", "t2"},           # turn 2: own test ok, forgets t1b
              {"t1a", "t1b", "t3a"}]   # turn 3: half its own, forgets t2
    follow = iterative(tests, passed)
    assert [f.ia for f in follow] == [1.0, 1.0, 0.0]
    assert [f.ca for f in follow] == pytest.approx([1.0, 2 / 3, 3 / 5])
    # IFR: turn 2 loses 1 of {t1a, t1b}; turn 3 loses t2 of {t1a, t1b, t2}
    assert [f.ifr for f in follow] == pytest.approx([0.0, 0.5, 1 / 3])
