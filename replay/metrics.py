"""The benchmarks' metrics, as plain functions of plain data.

- ``f1`` / ``matched_f1``: set F1 (LoCoEval's topic awareness and item extraction),
  exact or through a matcher (an LLM judge or an embedding threshold).
- ``pass_at_k``: the unbiased estimator of Chen et al. (2021).
- ``normalized``: (s - empty) / (oracle - empty).
- ``compression``: tokens / tokens of ``full`` on the same source.
- ``iterative``: CodeIF-Bench's IA, CA and IFR per turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float


def _scores(matched: int, predicted: int, truth: int) -> Scores:
    if predicted == 0 and truth == 0:
        return Scores(1.0, 1.0, 1.0)  # nothing to find and nothing claimed
    precision = matched / predicted if predicted else 0.0
    recall = matched / truth if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1)


def f1(predicted: Sequence[str], truth: Sequence[str]) -> Scores:
    """Exact set F1 (duplicates count once)."""
    pred, gold = set(predicted), set(truth)
    return _scores(len(pred & gold), len(pred), len(gold))


def greedy_matches(predicted: Sequence[str], truth: Sequence[str],
                   score: Callable[[int, int], float], threshold: float) -> list[tuple[int, int]]:
    """A one-to-one matching: the best-scoring pairs first, each side used once.
    ``score(i, j)`` rates predicted[i] against truth[j]."""
    pairs = sorted(((score(i, j), i, j) for i in range(len(predicted))
                    for j in range(len(truth))), key=lambda x: (-x[0], x[1], x[2]))
    used_p: set[int] = set()
    used_t: set[int] = set()
    out = []
    for value, i, j in pairs:
        if value < threshold:
            break
        if i in used_p or j in used_t:
            continue
        used_p.add(i)
        used_t.add(j)
        out.append((i, j))
    return out


def matched_f1(predicted: Sequence[str], truth: Sequence[str], matches: int) -> Scores:
    """F1 when a matcher found ``matches`` one-to-one pairs."""
    return _scores(matches, len(predicted), len(truth))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` pass: 1 - C(n-c, k) / C(n, k)."""
    if not 0 <= c <= n or k < 1 or n < 1:
        raise ValueError(f"need 0 <= c <= n, n >= 1, k >= 1 (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def normalized(score: float, empty: float, oracle: float) -> float | None:
    """Where ``score`` falls between the lower (empty) and upper (oracle) bound."""
    if oracle == empty:
        return None
    return (score - empty) / (oracle - empty)


def compression(tokens: int, full_tokens: int) -> float | None:
    return tokens / full_tokens if full_tokens else None


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
