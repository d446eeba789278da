"""Set matching for F1 tasks: the offline embedding judge (MiniLM cosine >= threshold) or
an LLM judge."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.embed import Embedder
from memory.lenient_json import MalformedJSON, parse_json
from memory.llm import LLMError
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
        # einsum, not @: see memory.embed.cosine (OpenBLAS threads slow MiniLM after)
        sims = np.einsum("ij,kj->ik", vectors[: len(predicted)], vectors[len(predicted):])
        pairs = greedy_matches(predicted, truth,
                               lambda i, j: float(sims[i, j]),
                               self.threshold)
        return matched_f1(predicted, truth, len(pairs))

    async def score_async(self, predicted: list[str], truth: list[str]) -> Scores:
        return self.score(predicted, truth)


JUDGE_PROMPT = """You compare two lists of statements about a code base.
A predicted statement matches a reference statement when it says the same thing
(same fact, same constraint, same names); wording may differ, the substance may not.
Each statement matches at most one statement of the other list.
Answer with JSON only: {"matches": [[p, r], ...]} with p the number of a predicted
statement and r the number of a reference statement; {"matches": []} if none match."""


@dataclass
class LLMJudge:
    """Set matching by a model (``--judge-model``); a malformed verdict falls back to the
    embedding judge for that one comparison, and is counted."""

    llm: Any
    fallback: EmbedJudge
    name: str = "llm"
    fallbacks: int = 0

    async def score_async(self, predicted: list[str], truth: list[str]) -> Scores:
        if not predicted or not truth:
            return matched_f1(predicted, truth, 0)
        listing = ("Predicted:\n" + "\n".join(f"{i}: {p}" for i, p in enumerate(predicted))
                   + "\n\nReference:\n" + "\n".join(f"{j}: {t}" for j, t in enumerate(truth)))
        try:
            text = await self.llm.complete(
                [{"role": "system", "content": JUDGE_PROMPT},
                 {"role": "user", "content": listing}],
                purpose="judge", temperature=0.0, max_tokens=300)
            pairs = parse_json(text).get("matches", [])
            seen_p: set[int] = set()
            seen_t: set[int] = set()
            for pair in pairs:
                i, j = int(pair[0]), int(pair[1])
                if 0 <= i < len(predicted) and 0 <= j < len(truth) and \
                        i not in seen_p and j not in seen_t:
                    seen_p.add(i)
                    seen_t.add(j)
            return matched_f1(predicted, truth, len(seen_p))
        except (LLMError, MalformedJSON, AttributeError, TypeError, ValueError, IndexError):
            self.fallbacks += 1
            return self.fallback.score(predicted, truth)
