"""Distracting items for the outline builder (LoCoEval 3.1.2).

For a mutated unit of type 1-3 (function location, internal dependency, external
dependency) the stale claim points at another REAL place of the repository, the most
similar ones first: another source file, another function defined in the repository,
another import the repository really makes. A parameter list gets a real variant of
itself (an order, a parameter more or less, a renamed one); a description gets a plain
contradiction (``_contradict``: negation, a value of its own swapped, another real
function's requirement), or the LLM's rewrite when a model is given (``llm_rewrites``).
No stale version says that it is stale: only the order tells (LoCoEval's condition).
"""

from __future__ import annotations

import difflib
import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replay.locoeval._analyse import RepoFacts
from replay.locoeval._contradict import CONSTRAINT, REVISION_WORDS, contradictions

if TYPE_CHECKING:
    from memory.llm.client import LLM

REAL_TYPES = ("function_location", "internal_dependency", "external_dependency")
FRAMES = {"core_functionality": "`{qual}` should: {claim}",
          "logical_constraint": "For `{qual}`: {claim}"}
FALLBACKS = {  # a description nothing else contradicts (a repository of one function)
    "core_functionality": ("`{qual}` should return its input unchanged.",
                           "`{qual}` should return None."),
    "logical_constraint": ("For `{qual}`: any input is accepted as it is.",
                           "For `{qual}`: invalid input gives None."),
}

REWRITE_SYSTEM = """You help build a benchmark of long developer conversations. Given one
true requirement about a function, write other versions of it that a developer could
have stated before settling on the true one. Each must contradict the true one (another
value, the opposite rule, another behaviour, another exception or return type), keep its
form and its length, name the function, and read as a plain, final requirement: never say
or hint that it is tentative, earlier, replaced or corrected (no "for now", "at first",
"actually", "instead", "later", "no longer", "initially", "temporary", "placeholder").
Answer as JSON: {"distractors": ["...", "..."]}."""
REWRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"distractors": {"type": "array", "items": {"type": "string"},
                                   "minItems": 1, "maxItems": 3}},
    "required": ["distractors"],
    "additionalProperties": False,
}


@dataclass
class Unit:
    """One true information item of a sample, and what a stale version of it needs."""

    key: str  # unique in its sample: location, params, core, constraint:0, internal:name ...
    type: str
    text: str
    locations: list[str]
    subject: str  # the claim: a path, a parameter list, a sentence, a name
    extra: str = ""  # the module of an external name, the path of an internal one
    prereqs: list[str] = field(default_factory=list)


@dataclass
class RewriteStats:
    asked: int = 0
    fallbacks: int = 0  # LLM failures (no valid JSON): templates used instead


def _similar(wanted: str, options: list[Any], key: Any) -> list[Any]:
    return sorted(options, key=lambda o: (-difflib.SequenceMatcher(None, wanted, key(o)).ratio(),
                                          key(o)))


def real_candidates(unit: Unit, path: str, facts: RepoFacts, used: set[str],
                    exclude: set[str]) -> list[tuple[str, list[str]]]:
    """Stale claims of a type 1-3 unit pointing at similar real places, best first.
    ``used``: names the target really uses; ``exclude``: locations of removed targets."""
    qual = unit.text.split("`")[1]
    if unit.type == "function_location":
        files = [f for f in facts.files if f != path and not f.endswith("__init__.py")]
        top = path.split("/")[0]  # files of the target's own package, if it has others
        files = [f for f in files if f.split("/")[0] == top] or files
        return [(f"`{qual}` belongs in `{f}`.", [f]) for f in _similar(path, files, str)]
    if unit.type == "internal_dependency":
        options = [f for f in facts.functions if "." not in f.qualname
                   and f.name not in used and f.location not in exclude]
        return [(f"`{qual}` should reuse `{f.name}` from `{f.path}`.", [f.location])
                for f in _similar(unit.subject, options, lambda f: f.name)]
    options2 = [(n, m) for n, m in facts.externals if n not in used]
    ranked = sorted(_similar(unit.subject, options2, lambda o: o[0]),
                    key=lambda o: o[1] != unit.extra)
    return [(f"`{qual}` needs `{n}` from the `{m}` module.", []) for n, m in ranked]


def _param_variants(params: list[str]) -> list[str]:
    """Real-looking variants of a parameter list: the last one dropped, the first two
    swapped, one added, the first renamed; a new parameter goes before any ``*args`` or
    ``**kwargs`` so every variant is a valid signature."""
    plain = [p for p in params if p not in ("self", "cls")]
    head = [p for p in params if p in ("self", "cls")]
    star = next((n for n, p in enumerate(plain) if p.startswith("*")), len(plain))
    out = []
    if len(plain) > 1:
        out.append(plain[:-1])
        if not any(p.startswith("*") for p in plain[:2]):
            out.append([plain[1], plain[0], *plain[2:]])
    names = {re.split(r"[:=]", p)[0].strip(" *") for p in plain}
    extra = next(f"{n}={v}" for n, v in (("strict", "False"), ("check", "True"),
                                         ("validate", "False")) if n not in names)
    if not any(p.startswith("**") for p in plain):
        out.append([*plain[:star], extra, *plain[star:]])
    if plain and not plain[0].startswith("*"):
        first = plain[0].split("=")[0].split(":")[0].strip()
        out.append([f"raw_{first}" if not first.startswith("raw") else "value", *plain[1:]])
    if star == len(plain) and "dry_run" not in names:
        out.append([*plain, "*, dry_run=True"])
    return [shown for shown in (", ".join(head + v) for v in out) if _valid(shown)]


def _valid(params: str) -> bool:
    """A parameter list Python accepts (no default before a plain parameter, ...)."""
    try:
        compile(f"def f({params}):\n    pass\n", "<variant>", "exec")
    except SyntaxError:
        return False
    return True


def template_candidates(unit: Unit, qual: str, params: list[str], facts: RepoFacts,
                        own: list[str], skip: set[str]) -> list[str]:
    """Stale versions of a parameter list or a description, best first, none saying that
    it is stale (``_contradict``). ``own``: the target's own sentences (a borrowed one too
    close to them is not a contradiction); ``skip``: functions not to borrow from."""
    if unit.type == "parameter_list":
        return [f"`{qual}` takes ({v})." for v in _param_variants(params)]
    names = [re.split(r"[:=]", p)[0].strip(" *") for p in params]
    frame = FRAMES.get(unit.type, "For `{qual}`: {claim}")
    core = unit.type == "core_functionality"
    out = contradictions(unit.subject, frame, qual, names, facts, own,
                         lambda s: bool(CONSTRAINT.search(s)), core, skip)
    return out or [t.format(qual=qual) for t in FALLBACKS.get(unit.type, FALLBACKS[
        "logical_constraint"])]


def real_fallbacks(unit: Unit, qual: str) -> list[tuple[str, list[str]]]:
    """Plain stale versions of a type 1-3 unit when the repository has no other place."""
    if unit.type == "function_location":
        folder = unit.subject.rpartition("/")[0]
        path = f"{folder}/{qual.split('.')[-1].lower()}.py".lstrip("/")
        return [(f"`{qual}` belongs in `{path}`.", [])]
    if unit.type == "internal_dependency":
        return [(f"`{qual}` should not reuse `{unit.subject}`; it has its own code.", [])]
    return [(f"`{qual}` should not import anything from the `{unit.extra}` module.", [])]


def pick(candidates: list[Any], n: int, rng: random.Random, pool: int = 4) -> list[Any]:
    """``n`` distinct candidates drawn among the best ``max(pool, n)`` (kept in rank order)."""
    top = candidates[:max(pool, n)]
    chosen = sorted(rng.sample(range(len(top)), min(n, len(top))))
    return [top[i] for i in chosen]


def usable_rewrite(text: str, unit: Unit, qual: str) -> bool:
    """A rewrite is used when it is a statement about the function (names it, four words
    or more), differs from the truth, and says nothing of being stale."""
    return (text != unit.text and len(text.split()) >= 4 and qual.split(".")[-1] in text
            and not REVISION_WORDS.search(re.sub(r"`[^`]*`", "", text)))


async def llm_rewrites(llm: LLM, qual: str, units: list[Unit],
                       stats: RewriteStats) -> dict[str, list[str]]:
    """Up to three stale versions of each unit's claim, by the LLM; a unit whose call
    fails, or whose answers are none of them usable (``usable_rewrite``), is left out
    (the builder uses its templates) and counted in ``stats``."""
    from memory.llm.client import LLMError

    out: dict[str, list[str]] = {}
    for unit in units:
        stats.asked += 1
        messages = [{"role": "system", "content": REWRITE_SYSTEM},
                    {"role": "user", "content": f"Function: `{qual}`\nType: {unit.type}\n"
                                                f"True requirement: {unit.text}\n"
                                                "Write three other versions."}]
        try:
            value = await llm.complete_json(messages, REWRITE_SCHEMA, purpose="memory",
                                            name="distractors", max_tokens=300)
        except LLMError:
            stats.fallbacks += 1
            continue
        texts = [" ".join(str(t).split()) for t in value.get("distractors", [])]
        texts = [t for t in dict.fromkeys(texts) if usable_rewrite(t, unit, qual)]
        if texts:
            out[unit.key] = texts[:3]
        else:
            stats.fallbacks += 1
    return out
