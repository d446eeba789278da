"""LoCoMo's answer metrics, as its own evaluation computes them (``task_eval/evaluation.py``
of snap-research/locomo, reimplemented from its description, not copied):

- an answer and its gold are normalised (lowercased; commas, then all punctuation
  removed; the words a, an, the and "and" dropped; whitespace collapsed), split into
  words and each word Porter-stemmed (nltk's ``PorterStemmer``, as LoCoMo uses);
- token F1 = 2PR / (P + R) over the multiset of common stems (0 when none);
- category 1 (multi-hop): the gold and the answer are split at commas; each gold part
  scores its best F1 over the answer's parts, and the question scores their mean;
- categories 2 and 4: token F1 of the whole answer; category 3: against the gold's part
  before its first ";" (the rest is the annotator's rationale);
- category 5 (adversarial): 1 when the answer says the information is not there
  ("no information available" or "not mentioned" in it, case-folded), else 0.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

from replay.locomo.data import ADVERSARIAL

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
NOT_AVAILABLE = ("no information available", "not mentioned")


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


def normalize(text: str) -> str:
    text = text.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def stems(text: str) -> list[str]:
    stem = _stemmer().stem
    return [stem(word) for word in normalize(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """LoCoMo's F1 of one answer against one gold, over stemmed words."""
    pred, truth = stems(prediction), stems(gold)
    same = sum((Counter(pred) & Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def partial_f1(prediction: str, gold: str) -> float:
    """Category 1: each comma-separated gold part's best F1 over the answer's parts,
    averaged over the gold's parts."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


def says_not_available(prediction: str) -> bool:
    low = prediction.lower()
    return any(phrase in low for phrase in NOT_AVAILABLE)


def score(category: int, prediction: str, gold: str) -> float:
    """The question's score as LoCoMo's evaluation counts it (0..1)."""
    if category == ADVERSARIAL:
        return 1.0 if says_not_available(prediction) else 0.0
    if category == 1:
        return partial_f1(prediction, gold)
    if category == 3:
        gold = gold.split(";")[0].strip()
    return token_f1(prediction, gold)
