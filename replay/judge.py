"""Set matching for F1 tasks: the offline embedding judge (MiniLM cosine >= threshold)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from memory.embed import Embedder
from replay.metrics import Scores, greedy_matches, matched_f1

THRESHOLD = 0.75


def answer_lines(answer: str) -> list[str]:
    """An answer as a list: one entry per non-empty line, list markers stripped."""
    out = []
    for line in answer.splitlines():
        text = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        if text and not text.startswith("```"):
            out.append(text)
    return out


@dataclass
class EmbedJudge:
    """Deterministic and offline: two texts match when their MiniLM cosine is high enough;
    pairs are matched one-to-one, best first."""

    embedder: Embedder
    threshold: float = THRESHOLD
    name: str = "embed"

    def score(self, predicted: list[str], truth: list[str]) -> Scores:
        if not predicted or not truth:
            return matched_f1(predicted, truth, 0)
        vectors = self.embedder.embed([*predicted, *truth])
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        sims = vectors[: len(predicted)] @ vectors[len(predicted):].T
        pairs = greedy_matches(predicted, truth,
                               lambda i, j: float(sims[i, j]),
                               self.threshold)
        return matched_f1(predicted, truth, len(pairs))
