"""Set matching for the F1 tasks (topic awareness, item extraction), as LoCoEval scores them.

An answer's predictions are its list items (a preamble such as "Here is what we
settled:" is not a prediction); the judge decides which prediction matches which true
item, and F1 follows LoCoEval's definition (``replay.core.metrics.set_f1``: any-match, not
one-to-one). Two judges:

- ``EmbedJudge`` (offline, deterministic): the distractor-aware MiniLM matcher of
  ``replay.locoeval.matcher``.
- ``LLMJudge``: any litellm model, asked for a JSON verdict (the matching pairs of
  element ids) through ``LLM.complete_json``; an answer that fails to parse is counted
  and that one comparison falls back to the embedding judge.

A judge bound to an outline (``for_outline``) knows the distractors of each true item's
unit, so a prediction stating the stale version does not count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memory.index.embed import Embedder
from memory.llm.client import LLMError, StructuredOutputError
from replay.core.metrics import Scores, set_f1
from replay.locoeval.matcher import THRESHOLD, EmbedMatcher, pair_checks, unit_pairs

if TYPE_CHECKING:
    from replay.locoeval.outline import Outline

__all__ = ["THRESHOLD", "EmbedJudge", "LLMJudge", "answer_lines", "judge_accuracy"]

_ITEM = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|\(\d+\))\s+(.*\S)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _clean(text: str) -> str:
    text = re.sub(r"^\*\*(.+?)\*\*:?\s*$", r"\1", text.strip())  # a bold-only line
    return text.strip()


def answer_lines(answer: str) -> list[str]:
    """An answer's predictions: its list items (bulleted or numbered lines, an indented
    continuation line joined to its item), or, when it has no list, its non-empty lines.
    Code blocks and headings are never predictions."""
    items: list[str] = []
    lines: list[str] = []
    in_code = False
    last_was_item = False
    for raw in answer.splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            last_was_item = False
            continue
        if in_code:
            continue
        if not raw.strip() or raw.lstrip().startswith("#"):
            last_was_item = False
            continue
        match = _ITEM.match(raw)
        if match:
            items.append(_clean(match.group(1)))
            last_was_item = True
        elif last_was_item and raw[:1].isspace():
            items[-1] = f"{items[-1]} {raw.strip()}"
        else:
            last_was_item = False
            lines.append(_clean(raw))
    return [t for t in (items or lines) if t]


@dataclass
class EmbedJudge:
    """Deterministic and offline: the distractor-aware MiniLM matcher (replay.locoeval.matcher)."""

    embedder: Embedder
    threshold: float = THRESHOLD
    name: str = "embed"
    stale_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    items: tuple[str, ...] = ()  # every item text of the bound outline

    @property
    def matcher(self) -> EmbedMatcher:
        return EmbedMatcher(self.embedder, self.threshold)

    def for_outline(self, outline: Outline) -> EmbedJudge:
        texts = tuple(dict.fromkeys(i.text for s in outline.samples for i in s.items))
        return replace(self, stale_of=stale_texts(outline), items=texts)

    def relation(self, predicted: Sequence[str], truth: Sequence[str],
                 rivals: Sequence[Sequence[str]] | None = None) -> set[tuple[int, int]]:
        """Matches of ``predicted`` against ``truth``. Bound to an outline, each true item
        must beat its unit's distractors and, when ``truth`` are items (extraction), the
        outline's other items are decoys: a statement about another sample's item does
        not count for this sample."""
        if rivals is None:
            rivals = [self.stale_of.get(t, ()) for t in truth]
        known = set(self.items)
        decoys = ([t for t in self.items if t not in set(truth)]
                  if truth and all(t in known for t in truth) else [])
        return self.matcher.relation(predicted, truth, rivals, decoys)

    def score(self, predicted: list[str], truth: list[str]) -> Scores:
        return set_f1(len(predicted), len(truth), self.relation(predicted, truth))

    async def relation_async(self, predicted: Sequence[str], truth: Sequence[str],
                             rivals: Sequence[Sequence[str]] | None = None
                             ) -> set[tuple[int, int]]:
        return self.relation(predicted, truth, rivals)

    async def score_async(self, predicted: list[str], truth: list[str]) -> Scores:
        return self.score(predicted, truth)


def stale_texts(outline: Outline) -> dict[str, tuple[str, ...]]:
    """For each true item's text: the texts of the distractors of its unit."""
    out: dict[str, tuple[str, ...]] = {}
    for sample in outline.samples:
        for item in sample.items:
            if item.truth:
                stale = [o.text for o in sample.items
                         if not o.truth and o.unit == item.unit and o.text != item.text]
                out[item.text] = tuple(dict.fromkeys([*out.get(item.text, ()), *stale]))
    return out


# The verdict: every (prediction, reference) pair that says the same thing.
def verdict_schema(predicted: int, truth: int) -> dict[str, Any]:
    """{"matches": [{"prediction": P, "reference": R}, ...]}: only the numbers shown, each
    pair at most once (so a model decoding under the schema cannot loop or invent)."""
    pair = {"type": "object",
            "properties": {"prediction": {"type": "integer", "enum": list(range(predicted))},
                           "reference": {"type": "integer", "enum": list(range(truth))}},
            "required": ["prediction", "reference"], "additionalProperties": False}
    return {"type": "object",
            "properties": {"matches": {"type": "array", "items": pair,
                                       "maxItems": predicted * truth}},
            "required": ["matches"], "additionalProperties": False}


VERDICT_SCHEMA = verdict_schema(1, 1)  # the shape, for readers and tests
JUDGE_PROMPT = """You grade predicted statements against reference statements about a code base.
A prediction matches a reference when it states the same fact, constraint or decision
(same names, same values, same direction); the wording may differ, the substance may not.
Some references list SUPERSEDED versions: a prediction that states a superseded version
(or contradicts the reference) does not match it.
A prediction may match several references and a reference may be matched by several
predictions: list every matching pair.
Answer with JSON: {"matches": [{"prediction": P, "reference": R}, ...]} where P and R are
the numbers shown; {"matches": []} when nothing matches."""


def verdict_prompt(predicted: Sequence[str], truth: Sequence[str],
                   rivals: Sequence[Sequence[str]]) -> str:
    lines = ["Predictions:", *(f"P{i}: {p}" for i, p in enumerate(predicted)),
             "", "References:"]
    for j, text in enumerate(truth):
        lines.append(f"R{j}: {text}")
        lines += [f"    (SUPERSEDED, not a match: {s})" for s in rivals[j]]
    lines += ["", "Give every (prediction number, reference number) pair that matches."]
    return "\n".join(lines)


@dataclass
class LLMJudge:
    """Set matching by a model (``--judge-model``), through the structured-output path;
    a verdict that fails to parse or validate is counted (``parse_failures``; ``errors``
    for failed calls) and that comparison is judged by the embedding judge instead
    (``fallbacks`` counts both)."""

    llm: Any
    fallback: EmbedJudge
    name: str = "llm"
    stale_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    calls: int = 0
    parse_failures: int = 0
    errors: int = 0

    @property
    def fallbacks(self) -> int:
        return self.parse_failures + self.errors

    def for_outline(self, outline: Outline) -> LLMJudge:
        return replace(self, stale_of=stale_texts(outline),
                       fallback=self.fallback.for_outline(outline))

    async def relation_async(self, predicted: Sequence[str], truth: Sequence[str],
                             rivals: Sequence[Sequence[str]] | None = None
                             ) -> set[tuple[int, int]]:
        if not predicted or not truth:
            return set()
        if rivals is None:
            rivals = [self.stale_of.get(t, ()) for t in truth]
        messages = [{"role": "system", "content": JUDGE_PROMPT},
                    {"role": "user", "content": verdict_prompt(predicted, truth, rivals)}]
        self.calls += 1
        try:
            verdict = await self.llm.complete_json(
                messages, verdict_schema(len(predicted), len(truth)), purpose="judge",
                name="verdict",
                max_tokens=min(2000, 40 + 16 * len(predicted) * max(1, len(truth))))
        except StructuredOutputError:
            self.parse_failures += 1
            return self.fallback.relation(predicted, truth, rivals)
        except LLMError:
            self.errors += 1
            return self.fallback.relation(predicted, truth, rivals)
        return {(int(m["prediction"]), int(m["reference"])) for m in verdict["matches"]
                if 0 <= int(m["prediction"]) < len(predicted)
                and 0 <= int(m["reference"]) < len(truth)}

    async def score_async(self, predicted: list[str], truth: list[str]) -> Scores:
        pairs = await self.relation_async(predicted, truth)
        return set_f1(len(predicted), len(truth), pairs)

    def stats(self) -> dict[str, int]:
        return {"calls": self.calls, "parse_failures": self.parse_failures,
                "errors": self.errors, "fallbacks": self.fallbacks}


async def judge_accuracy(judge: EmbedJudge | LLMJudge, outline: Outline) -> dict[str, Any]:
    """The judge's accuracy on the outline's own truth/distractor pairs: for each
    distractor d of a true item t, verbatim and restated (``replay.locoeval.matcher.restated``),
    t's text must match t over d and d's text must not. One verdict per outline."""
    checks = pair_checks(unit_pairs(outline))
    if not checks:
        return {"checks": 0, "correct": 0, "accuracy": None, "judge": judge.name}
    if isinstance(judge, LLMJudge):  # its own counters: a pair's stats are its tasks'
        judge = replace(judge, calls=0, parse_failures=0, errors=0)
    statements = list(dict.fromkeys(c[0] for c in checks))
    truths = list(dict.fromkeys(c[1] for c in checks))
    rivals = [sorted({c[2] for c in checks if c[1] == t}) for t in truths]
    pairs = await judge.relation_async(statements, truths, rivals)
    correct = sum(((statements.index(text), truths.index(true)) in pairs) == expected
                  for text, true, _, expected in checks)
    out = {"checks": len(checks), "correct": correct, "accuracy": correct / len(checks),
           "judge": judge.name}
    if isinstance(judge, LLMJudge):
        out["stats"] = judge.stats()
    return out
