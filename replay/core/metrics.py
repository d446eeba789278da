"""The benchmarks' metrics, as plain functions of plain data.

- ``set_f1`` / ``f1``: set F1 as LoCoEval defines it (topic awareness, item extraction):
  Precision = |Pred ∩ Gt| / |Pred| and Recall = |Gt ∩ Pred| / |Gt|, where the elements
  of each intersection are taken from its left operand: a prediction counts when it
  matches any true item, a true item counts when any prediction matches it. This is not
  a one-to-one matching: two predictions of the same item both count for precision.
- ``pass_at_k``: the unbiased estimator of Chen et al. (2021).
- ``normalized``: 100 * (s - empty) / (oracle - empty), a percentage.
- ``compression``: tokens of ``full`` / tokens of the backend ("5.7×": higher = less context).
- ``iterative``: CodeIF-Bench's IA, CA and IFR per turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float


def _scores(matched_pred: int, predicted: int, matched_truth: int, truth: int) -> Scores:
    if predicted == 0 and truth == 0:
        return Scores(1.0, 1.0, 1.0)  # nothing to find and nothing claimed
    precision = matched_pred / predicted if predicted else 0.0
    recall = matched_truth / truth if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1)


def set_f1(predicted: int, truth: int, matches: Iterable[tuple[int, int]]) -> Scores:
    """LoCoEval's F1 from a match relation.

    ``matches`` holds the pairs (i, j) where prediction i matches true item j (any number
    of pairs per prediction and per item). Pred ∩ Gt = the predictions in some pair,
    Gt ∩ Pred = the true items in some pair."""
    pairs = [(i, j) for i, j in matches if 0 <= i < predicted and 0 <= j < truth]
    return _scores(len({i for i, _ in pairs}), predicted, len({j for _, j in pairs}), truth)


def f1(predicted: Sequence[str], truth: Sequence[str]) -> Scores:
    """Exact set F1: a prediction matches an item when the texts are equal (duplicates
    count once: the sets are taken first)."""
    pred, gold = sorted(set(predicted)), sorted(set(truth))
    return set_f1(len(pred), len(gold),
                  ((i, j) for i, p in enumerate(pred) for j, t in enumerate(gold) if p == t))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` pass: 1 - C(n-c, k) / C(n, k)."""
    if not 0 <= c <= n or k < 1 or n < 1:
        raise ValueError(f"need 0 <= c <= n, n >= 1, k >= 1 (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def normalized(score: float, empty: float, oracle: float) -> float | None:
    """Where ``score`` falls between the lower (empty) and the upper (oracle) bound, in
    percent: 0 = as good as no memory, 100 = as good as the ground truth. None when the
    bounds coincide (the score cannot be placed)."""
    if oracle == empty:
        return None
    return 100.0 * (score - empty) / (oracle - empty)


def compression(tokens: int, full_tokens: int) -> float | None:
    """LoCoEval's compression ratio: tokens of ``full`` / tokens of the backend (the text
    and Tables 5-6 of the paper; its equation 2 prints the inverse). Higher = less context;
    ``full`` itself is 1. None when the backend used no tokens."""
    return full_tokens / tokens if tokens else None


@dataclass(frozen=True)
class TurnFollow:
    ia: float  # instruction accuracy: the turn's own tests all pass
    ca: float  # conversation accuracy: share of the tests of turns 1..n passed
    ifr: float  # instruction forgetting ratio: earlier-passed tests now failing


def iterative(turn_tests: Sequence[Sequence[str]],
              passed: Sequence[set[str]]) -> list[TurnFollow]:
    """IA, CA and IFR per turn.

    ``turn_tests[n]`` are the test ids introduced at turn n; ``passed[n]`` the ids
    (of turns 0..n) that answer n passes."""
    if len(turn_tests) != len(passed):
        raise ValueError("one set of passed tests per turn")
    out = []
    so_far: list[str] = []
    ever: set[str] = set()
    for tests, ok in zip(turn_tests, passed, strict=True):
        so_far.extend(tests)
        ia = 1.0 if tests and set(tests) <= ok else 0.0
        ca = len(set(so_far) & ok) / len(set(so_far)) if so_far else 0.0
        ifr = len(ever - ok) / len(ever) if ever else 0.0
        out.append(TurnFollow(ia, ca, ifr))
        ever |= ok & set(so_far)
    return out
