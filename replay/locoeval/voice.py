"""The voice of the template mock user: how an outline's information items are worded when
said (a condition of the bench, ``--voice template|varied|PATH``).

- ``template``: the builder's wording, as the outline holds it ("`f` belongs in `p`.").
- ``varied``: each item in one of several shapes per item type (``SHAPES``): names in
  backticks, single or double quotes, or bare; the dependency or the function named first
  or last; imperative, first person, passive, question-shaped requests; synonyms for the
  builder's verbs. The same claim with the same names: a shape only reorders the parts it
  took out of the builder's sentence and never carries a revision cue (those are a
  condition of their own, ``--revision-cues``). The shape and quoting of an item are drawn
  by a RNG seeded from (seed, outline id, item id): byte-identical for a seed, whatever
  the order the outlines run in.
- a phrasing file: another writer's wording, ``{"writer": ..., "note": ...,
  "items": {"<outline id>": {"<item id>": "<text>"}}}``; an item the file leaves out is
  said as ``template``, and the results count the items it covered.

``voiced`` gives the outline as said: each item's ``text`` is the voiced text and
``as_built`` the builder's. Everything downstream that compares with what was said (the
template user, ``oracle``, the matcher's reader-free metrics, the judges, the
context-reading scripted reader of the tests) reads that outline.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replay.locoeval.outline import Item, Outline

KINDS = ("template", "varied")
QUOTES = ("`", "'", '"', "")  # how a varied item quotes its names (one style per item)

# The builder's frames (replay.locoeval.build.true_units; distractors take the same frame).
# f: the function, g: a dependency, p: a path, m: a module, a: a parameter list, w: prose.
FRAMES: dict[str, re.Pattern[str]] = {
    "function_location": re.compile(r"^`(?P<f>[^`]+)` belongs in `(?P<p>[^`]+)`\.$"),
    "parameter_list": re.compile(r"^`(?P<f>[^`]+)` takes (?P<a>\(.*\))\.$"),
    "core_functionality": re.compile(r"^`(?P<f>[^`]+)` should: (?P<w>.+)$", re.S),
    "logical_constraint": re.compile(r"^For `(?P<f>[^`]+)`: (?P<w>.+)$", re.S),
    "internal_dependency": re.compile(
        r"^`(?P<f>[^`]+)` should reuse `(?P<g>[^`]+)` from `(?P<p>[^`]+)`\.$"),
    "external_dependency": re.compile(
        r"^`(?P<f>[^`]+)` needs `(?P<g>[^`]+)` from the `(?P<m>[^`]+)` module\.$"),
}
NAMES = ("f", "g", "p", "m")  # the parts of a frame that are names (quoted by the style)

# Shapes per item type: format strings over the frame's parts (names already quoted; {W}
# is the prose with a final stop, {w} as built). No revision cue word in any of them
# (replay.locoeval._contradict.REVISION_WORDS; a test checks).
SHAPES: dict[str, tuple[str, ...]] = {
    "function_location": (
        "{f} belongs in {p}.", "Put {f} in {p}.", "I'd put {f} in {p}.",
        "{f} should live in {p}.", "{p} is where {f} goes.", "{f} should be defined in {p}.",
        "Can {f} go in {p}?", "Could you put {f} into {p}?", "The home of {f} is {p}.",
        "{f} goes in {p}."),
    "parameter_list": (
        "{f} takes {a}.", "{f} accepts {a}.", "I'd have {f} take {a}.",
        "Give {f} the parameters {a}.", "The parameters of {f} are {a}.",
        "Could {f} take {a}?", "{a} should be what {f} is called with.",
        "{f} should be called with {a}.", "Let {f} take {a}.", "Can {f} accept {a}?"),
    "core_functionality": (
        "{f} should: {w}", "What {f} does: {w}", "I want {f} to do this: {w}",
        "The job of {f}: {w}", "Here is what {f} is for. {W}", "Could {f} do this? {W}",
        "{W} That is what {f} should do.", "Behaviour of {f}: {w}",
        "Can you make {f} do the following? {W}"),
    "logical_constraint": (
        "For {f}: {w}", "A rule for {f}: {w}", "{f} has a constraint: {w}",
        "Make sure of this in {f}: {w}", "I need {f} to respect this: {w}",
        "{W} This holds for {f}.", "Could {f} keep to this? {W}", "In {f}: {w}"),
    "internal_dependency": (
        "{f} should reuse {g} from {p}.", "Have {f} call {g} from {p}.",
        "I'd have {f} use {g} from {p}.", "{g} from {p} should be reused by {f}.",
        "Can {f} lean on {g} from {p}?", "{f} builds on {g} in {p}.",
        "For {f}, rely on {g} from {p}.", "{g}, from {p}, is what {f} should call.",
        "Could {f} go through {g} in {p}?", "{f} should make use of {g} from {p}."),
    "external_dependency": (
        "{f} needs {g} from the {m} module.", "{f} imports {g} from {m}.",
        "I'd have {f} use {g} from the {m} module.", "{g} from {m} should get used by {f}.",
        "Can {f} use {g} from {m}?", "{f} depends on {g} from {m}.",
        "Import {g} from {m} in {f}.", "{f} requires {g} from the {m} library.",
        "Could {f} pull in {g} from {m}?"),
}
# Any other item (repo_knowledge, coding_convention, other; an outline's hand-written text
# that no frame fits): its text with its backticked names requoted, in a carrier sentence.
GENERIC = ("{t}", "Please keep in mind: {t}", "Note: {t}", "One more requirement: {t}",
           "I'd like this to hold: {t}", "Could we make sure of this? {t}",
           "{T} Please stick to that.", "Something to respect: {t}")
_SPAN = re.compile(r"`([^`]+)`")


class VoiceError(ValueError):
    """A voice that cannot be used: an unknown kind, a phrasing file that does not load
    or names outlines or items the run does not have."""


def _quote(name: str, style: str) -> str:
    return f"{style}{name}{style}"


def _stop(text: str) -> str:
    text = text.rstrip()
    return text if text[-1:] in ".!?" else text + "."


@dataclass(frozen=True)
class Said:
    """An item as said: its text and the shape it took (``type:n``, ``generic:n``,
    ``template``, ``file``)."""

    text: str
    shape: str


def vary(item: Item, rng: random.Random) -> Said:
    """``item`` (as built) in a shape of its type drawn by ``rng``, its names quoted in a
    style drawn by ``rng``: every name of the builder's text is kept."""
    style = rng.choice(QUOTES)
    frame = FRAMES.get(item.type)
    match = frame.match(item.text) if frame else None
    if match is None:
        n = rng.randrange(len(GENERIC))
        text = _SPAN.sub(lambda m: _quote(m.group(1), style), item.text)
        return Said(GENERIC[n].format(t=text, T=_stop(text)), f"generic:{n}")
    parts = {k: _quote(v, style) if k in NAMES else v for k, v in match.groupdict().items()}
    if "w" in parts:
        parts["W"] = _stop(parts["w"])
    shapes = SHAPES[item.type]
    n = rng.randrange(len(shapes))
    return Said(shapes[n].format(**parts), f"{item.type}:{n}")


@dataclass(frozen=True)
class Phrasings:
    """Another writer's wording of items, by outline id and item id (a phrasing file)."""

    writer: str
    note: str
    items: dict[str, dict[str, str]]
    path: str
    sha256: str

    @classmethod
    def load(cls, path: Path) -> Phrasings:
        try:
            raw = Path(path).read_bytes()
            data = json.loads(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise VoiceError(f"phrasing file {path}: cannot read it: {exc}") from exc
        if not isinstance(data, dict):
            raise VoiceError(f"phrasing file {path}: expected a JSON object")
        writer, note, items = data.get("writer"), data.get("note", ""), data.get("items")
        if not isinstance(writer, str) or not writer.strip():
            raise VoiceError(f"phrasing file {path}: 'writer' must name who wrote it")
        if not isinstance(note, str):
            raise VoiceError(f"phrasing file {path}: 'note' must be text")
        if not isinstance(items, dict):
            raise VoiceError(f"phrasing file {path}: 'items' must map outline ids to "
                             "{item id: text}")
        for oid, texts in items.items():
            if not isinstance(texts, dict) or not all(
                    isinstance(t, str) and t.strip() for t in texts.values()):
                raise VoiceError(f"phrasing file {path}: items[{oid!r}] must map item ids "
                                 "to non-empty texts")
        return cls(writer, note, {str(o): {str(i): t for i, t in v.items()}
                                  for o, v in items.items()},
                   str(path), hashlib.sha256(raw).hexdigest())

    def check(self, outlines: list[Outline], *, every_outline: bool = True) -> None:
        """Raise ``VoiceError`` for an item id the file names that ``outlines`` do not
        have; with ``every_outline``, also for an outline id none of them has."""
        known = {o.id: o for o in outlines}
        problems = []
        for oid, texts in self.items.items():
            outline = known.get(oid)
            if outline is None:
                if every_outline:
                    problems.append(f"unknown outline {oid!r}")
                continue
            unknown = sorted(set(texts) - set(outline.items))
            if unknown:
                problems.append(f"outline {oid!r} has no item(s) {', '.join(unknown)}")
        if problems:
            raise VoiceError(f"phrasing file {self.path}: " + "; ".join(problems))


@dataclass
class Voice:
    """A run's voice: ``kind`` template | varied | file (``phrasings`` set)."""

    kind: str
    seed: int = 0
    phrasings: Phrasings | None = None

    def said(self, outline: Outline, item: Item) -> Said:
        if self.kind == "varied":
            return vary(item, random.Random(f"{self.seed}:{outline.id}:{item.id}:voice"))
        if self.phrasings is not None:
            text = self.phrasings.items.get(outline.id, {}).get(item.id)
            if text is not None:
                return Said(text, "file")
        return Said(item.text, "template")

    def record(self, outline: Outline | None = None) -> dict[str, Any]:
        """What the results say of the voice (for one outline: the items it covered)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "varied":
            out["seed"] = self.seed
        if self.phrasings is not None:
            out.update(path=self.phrasings.path, writer=self.phrasings.writer,
                       sha256=self.phrasings.sha256)
            if outline is not None:
                out["covered"] = sum(1 for i in outline.items
                                     if i in self.phrasings.items.get(outline.id, {}))
                out["items"] = len(outline.items)
        return out


def voice_of(spec: str, seed: int = 0) -> Voice:
    """``template``, ``varied`` (drawn by ``seed``) or the path of a phrasing file."""
    if spec in KINDS:
        return Voice(spec, seed)
    path = Path(spec)
    if not path.is_file():
        raise VoiceError(f"voice {spec!r}: neither {' nor '.join(KINDS)} nor a phrasing file")
    return Voice("file", seed, Phrasings.load(path))


def voiced(outline: Outline, voice: Voice) -> Outline:
    """``outline`` as said by ``voice``: each item's text voiced, its builder text kept in
    ``as_built``. The template voice gives the outline itself."""
    if voice.kind == "template":
        return outline
    if voice.phrasings is not None:
        voice.phrasings.check([outline], every_outline=False)

    def item(it: Item) -> Item:
        text = voice.said(outline, it).text
        return it if text == it.text else replace(it, text=text, as_built=it.text)

    samples = tuple(replace(s, items=tuple(item(i) for i in s.items)) for s in outline.samples)
    return replace(outline, samples=samples)


# -- the option (kept apart, for replay's CLI to add with the other benchmark options) ----
def add_voice_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--voice", default="template", metavar="template|varied|FILE",
        help="how the template mock user words outline items: template (the builder's "
             "wording), varied (one of many phrasings per item, drawn by --seed), or a "
             "phrasing file by another writer (JSON: writer, note, items by outline and "
             "item id; items it leaves out are said as template)")


def check_voice(spec: str, outlines: list[Any], seed: int = 0) -> Voice:
    """The voice of ``spec``, its phrasing file checked against the run's outlines (other
    sources are ignored): raises ``VoiceError`` before anything runs."""
    voice = voice_of(spec, seed)
    found = [o for o in outlines if isinstance(o, Outline)]
    if voice.phrasings is not None and found:
        voice.phrasings.check(found)
    return voice
