"""The offline matcher: does a statement say the same as a reference item? (MiniLM cosine)

A statement matches a reference when
- their cosine is at least the threshold,
- the reference is the nearest of the references it is compared with (so "reuse
  ``parse_price``" does not also match "reuse ``quantize_cents``"), and
- it is strictly closer to the reference than to each of the reference's rivals: the
  distractors of the same unit ("must raise" vs "must not raise" share almost every
  word; cosine alone cannot tell them apart, the nearer of the two can).

A statement that quotes one text word for word (a reference, a rival or a decoy) says
that text and no other: it matches that reference, or none, whatever the cosine (one
that quotes several, "X or Y", is read by the cosine rule). MiniLM hardly sees the order
of words, so "`f` takes (n, seq)." may lie nearer to its rival "`f` takes (seq, n)."
than to itself once a statement wraps it in quotes.

The same matcher drives the offline F1 judge and the reader-free context metrics, and
its accuracy on an outline's own truth/distractor pairs is reported with every run. The
context metrics add two rules, since a context holds more than statements about one
function (code, card labels, other functions' facts):
- a statement says something of a reference only when it shares a word with it beyond
  the function's own name and words every sentence has ("Scope: `f`" says nothing of
  "`f` takes (dt)."; MiniLM's cosine of two short texts is mostly their identifier);
- a relation of the function to a place (its location, a dependency) is stated only by
  a statement that names the place (the dependency, the file) and is about the function:
  names it, or stands under a heading or lead line that does ("## `f`", "For `f`:"),
  whatever the backend's sections: a line about `time_isoformat` alone does not say
  that `duration_isoformat` should reuse it, nor does "Libraries `f` needs." say which.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from memory.index.embed import Embedder

if TYPE_CHECKING:
    from memory.types import ContextPack
    from replay.locoeval.outline import Outline, Sample

THRESHOLD = 0.75
TIE = 1e-6  # two references this close to a statement are both its nearest
QUOTED_MIN = 12  # characters a text needs before quoting it word for word decides a match
RELATIONS = ("function_location", "internal_dependency", "external_dependency")
_WORD = re.compile(r"[a-z0-9_]+")
_SPAN = re.compile(r"`([^`]+)`")
_COMMON = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "as", "and",
    "or", "is", "are", "be", "been", "it", "its", "this", "that", "these", "those", "should",
    "must", "can", "may", "will", "also"))
_MARKER = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")


def _unit_vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@dataclass
class EmbedMatcher:
    embedder: Embedder
    threshold: float = THRESHOLD

    def relation(self, predicted: Sequence[str], references: Sequence[str],
                 rivals: Sequence[Sequence[str]] | None = None,
                 decoys: Sequence[str] = (), subject: str = "") -> set[tuple[int, int]]:
        """The pairs (i, j) where ``predicted[i]`` matches ``references[j]``;
        ``rivals[j]`` are the texts reference j must beat (its unit's distractors);
        ``decoys`` take part in "nearest" but are never matched (the other items of the
        outline: a statement about another sample's item is not about this one's). A
        statement quoting one of these texts word for word matches it if it is a
        reference, else nothing. ``subject``, when given (the references' function), is
        not a word a statement and a reference may share alone (``shares_a_word``)."""
        if not predicted or not references:
            return set()
        rivals = rivals or [()] * len(references)
        rival_texts = list(dict.fromkeys(t for group in rivals for t in group))
        texts = list(dict.fromkeys([*predicted, *references, *rival_texts, *decoys]))
        where = {t: n for n, t in enumerate(texts)}
        vectors = _unit_vectors(self.embedder, texts)
        pred = vectors[[where[p] for p in predicted]]
        # einsum, not @: see memory.index.embed.cosine (OpenBLAS threads slow MiniLM after)
        sims = np.einsum("ij,kj->ik", pred, vectors)
        ref_cols = [where[r] for r in references]
        ref_sims = sims[:, ref_cols]
        nearest = sims[:, list(dict.fromkeys([*ref_cols, *(where[d] for d in decoys)]))].max(
            axis=1)
        forms = {t: flat(t) for t in dict.fromkeys([*references, *rival_texts, *decoys])
                 if len(t) >= QUOTED_MIN}
        quoted = [_quoted(p, forms) for p in predicted]
        shared = ([[shares_a_word(p, r, subject) for r in references] for p in predicted]
                  if subject else None)
        out: set[tuple[int, int]] = set()
        for j, group in enumerate(rivals):
            cols = [where[t] for t in group if t != references[j]]
            beat = sims[:, cols].max(axis=1) if cols else np.full(len(predicted), -2.0)
            for i in range(len(predicted)):
                if quoted[i] is not None:
                    if quoted[i] == references[j]:
                        out.add((i, j))
                    continue
                value = ref_sims[i, j]
                if value >= self.threshold and value >= nearest[i] - TIE and value > beat[i] \
                        and (shared is None or shared[i][j]):
                    out.add((i, j))
        return out


def _words(text: str, subject: str) -> set[str]:
    return set(_WORD.findall(text.casefold())) - _COMMON - set(_WORD.findall(subject.casefold()))


def shares_a_word(statement: str, reference: str, subject: str) -> bool:
    """Whether ``statement`` and ``reference`` share a word other than those of ``subject``
    (a name: ``Cart.total`` is two) and the words any sentence has."""
    return bool(_words(statement, subject) & _words(reference, subject))


def place(reference: str, subject: str) -> str:
    """What a location or dependency item relates its function ``subject`` to: the name
    after the function's (``parse_price`` in "`f` should reuse `parse_price` from
    `a/money.py`"), a file by its stem (``money`` in "`f` belongs in `a/money.py`"), by
    its name when the stem is the function's (`a/f.py`); "" when it quotes no second name
    (an outline written by hand)."""
    spans = _SPAN.findall(reference)
    if len(spans) < 2:
        return ""
    name = spans[1]
    if not name.endswith(".py"):
        return name
    file = name.rsplit("/", 1)[-1]
    stem = file.removesuffix(".py")
    return file if stem.casefold() == subject.casefold() else stem


def about(text: str, subject: str) -> set[str]:
    """The statements of ``text`` (``statements``' form) about ``subject``: those that name
    it, and those under a heading or lead line that does ("## `f`", "For `f`:")."""
    out: set[str] = set()
    under = False
    for line in text.splitlines():
        line = _MARKER.sub("", line).strip()
        named = names(line, subject, by_path=False)
        if line.startswith("#") or line.endswith(":"):
            under = named
        if line and (named or under):
            out.add(line)
    return out


def names(text: str, subject: str, *, by_path: bool = True) -> bool:
    """Whether ``text`` names ``subject`` (as a whole name: not ``parse_date`` in
    ``parse_datetime``). A file's stem is named by its path; ``by_path=False`` for a
    function: ``cron`` in ``src/validators/cron.py`` (the header of another function's
    code there) does not name the function ``cron``."""
    before, after = (r"(?<!\w)", r"(?!\w)") if by_path else (r"(?<![\w/])", r"(?!\w|\.py\b)")
    return re.search(f"{before}{re.escape(subject)}{after}", text) is not None


def flat(text: str) -> str:
    """``text`` in one case with its spacing collapsed: what word-for-word comparisons
    compare."""
    return " ".join(text.split()).casefold()


def _quotes(said: str, form: str) -> bool:
    """``said`` holds ``form`` as whole words (not "helper prices" for "prices")."""
    start = said.find(form)
    while start >= 0:
        end = start + len(form)
        if (start == 0 or not said[start - 1].isalnum()) and (
                end == len(said) or not said[end].isalnum() or not form[-1].isalnum()):
            return True
        start = said.find(form, start + 1)
    return False


def _quoted(statement: str, forms: dict[str, str]) -> str | None:
    """The text (a key of ``forms``, its ``flat`` form the value) ``statement`` quotes word
    for word, case and spacing aside; None when it quotes none or several (a hedge "X or
    Y", a dump of every version: then the cosine rule decides, as for any other
    statement). A text inside a longer quoted one does not count."""
    said = flat(statement)
    found = [t for t, form in forms.items() if _quotes(said, form)]
    found = [t for t in found if not any(o != t and forms[t] in forms[o] for o in found)]
    return found[0] if len(found) == 1 else None


# -- the judge's accuracy on an outline's own truth/distractor pairs ------------------------
def restated(text: str) -> str:
    """A plain restatement of an item, as a model might write it: no markdown, lower case."""
    plain = " ".join(text.replace("`", "").replace("*", "").split()).rstrip(".")
    return plain[:1].lower() + plain[1:]


def unit_pairs(outline: Outline) -> list[tuple[str, str]]:
    """(truth text, distractor text) for each distractor of each unit of the outline."""
    pairs = []
    for sample in outline.samples:
        for item in sample.items:
            if item.truth:
                continue
            for true in sample.items:
                if true.truth and true.unit == item.unit and true.text != item.text:
                    pairs.append((true.text, item.text))
    return pairs


Check = tuple[str, str, str, bool]  # (statement, true item, its distractor, should match)


def pair_checks(pairs: list[tuple[str, str]]) -> list[Check]:
    """The checks of each pair (t, d), verbatim and restated: t's text must match t (over
    its rival d), d's text must not."""
    checks: list[Check] = []
    for true, stale in pairs:
        for form in (str, restated):
            checks.append((form(true), true, stale, True))
            checks.append((form(stale), true, stale, False))
    return checks


# -- reader-free context metrics -------------------------------------------------------------
def statements(text: str) -> list[str]:
    """The statements of a context: its lines, list markers stripped (one fact per line, as
    the mock user says items and memories are shown). Lines are not cut into sentences: a
    stale "Scratch that: ... Not: <the true text>" would otherwise yield the truth."""
    out: list[str] = []
    for line in text.splitlines():
        line = _MARKER.sub("", line).strip()
        if len(line) >= 8 and not line.startswith("```"):
            out.append(line)
    return list(dict.fromkeys(out))


def context_metrics(matcher: EmbedMatcher, sample: Sample, pack: ContextPack,
                    others: Sequence[str] = ()) -> tuple[float, float]:
    """(recall of the sample's true items, share of stale items among the items present)
    in ``pack``: an item is present when some statement of the pack matches it, over the
    other items of the sample (each item's rivals: the other items of its unit) and
    ``others`` (the other samples' items, as decoys), sharing a word with it beyond the
    function's name; a location or dependency only by a statement naming its place and
    about the function (``about``)."""
    items = list(sample.items)
    subject = sample.function.rsplit(".", 1)[-1]
    sections = [s for s in pack.sections if s.kind != "system"]
    said = statements("\n".join(s.text for s in sections))
    on_it = set().union(*(about(s.text, subject) for s in sections))
    rivals = [[o.text for o in items if o.unit == i.unit and o is not i] for i in items]
    found = {j for i, j in matcher.relation(said, [i.text for i in items], rivals, others,
                                            sample.function)
             if items[j].type not in RELATIONS
             or (said[i] in on_it and names(said[i], place(items[j].built, subject) or subject))}
    true = [j for j, i in enumerate(items) if i.truth]
    stale = [j for j, i in enumerate(items) if not i.truth]
    hits_true = sum(1 for j in true if j in found)
    hits_stale = sum(1 for j in stale if j in found)
    recall = hits_true / len(true) if true else 1.0
    shown = hits_true + hits_stale
    return recall, (hits_stale / shown if shown else 0.0)


class TaskPacks:
    """The ContextPack of each question an agent answers without committing (the task
    queries), by query text: what the reader-free context metrics look at.

    It wraps ``agent.answer_with`` on that one agent instance; nothing else changes."""

    def __init__(self, agent: Any) -> None:
        self.packs: dict[str, ContextPack] = {}
        inner = agent.answer_with

        async def answer_with(backend: Any, query: str, on_token: Any = None) -> Any:
            agent.last_pack = None
            turn = await inner(backend, query, on_token)
            if agent.last_pack is not None:
                self.packs[query] = agent.last_pack
            return turn

        agent.answer_with = answer_with

    def metrics(self, matcher: EmbedMatcher, outline: Outline) -> dict[str, dict[str, float]]:
        """Recall and stale share per generation task, by ``matcher`` (the exact-text values
        that ``replay.locoeval.tasks`` computes are kept beside, as ``*_exact``, by the caller)."""
        recall: dict[str, float] = {}
        stale: dict[str, float] = {}
        for sample_id, query in outline.tasks.generate.items():
            pack = self.packs.get(query)
            if pack is not None:
                others = [i.text for s in outline.samples if s.id != sample_id for i in s.items]
                recall[sample_id], stale[sample_id] = context_metrics(
                    matcher, outline.sample(sample_id), pack, others)
        return {"recall": recall, "stale": stale}
