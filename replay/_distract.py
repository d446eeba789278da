"""Distracting items for the outline builder (LoCoEval 3.1.2).

For a mutated unit of type 1-3 (function location, internal dependency, external
dependency) the stale claim points at another REAL place of the repository, the most
similar ones first: another source file, another function defined in the repository,
another import the repository really makes. For every other type the claim is
rewritten: by the LLM when a model is given (``llm_rewrites``), else by templates.
"""

from __future__ import annotations

import difflib
import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replay._analyse import RepoFacts

if TYPE_CHECKING:
    from memory.llm import LLM

REAL_TYPES = ("function_location", "internal_dependency", "external_dependency")
NEGATIONS = (
    (r"\bRaises\b", "Never raises"), (r"\braises\b", "never raises"),
    (r"\bat most\b", "at least"), (r"\bat least\b", "at most"), (r"\bfewer\b", "more"),
    (r"\bpositive\b", "negative"), (r"\bnot including\b", "including"),
    (r"\bupper-case\b", "lower-case"), (r"\blower-case\b", "upper-case"),
    (r"\bsorted\b", "unsorted"), (r"\bkeeping order\b", "in any order"),
    (r"\bnon-negative\b", "negative"), (r"\bempty\b", "non-empty"),
    (r"\bhalves away from zero\b", "halves to even"), (r"\bup to\b", "past"),
    (r"\bDecimal\b", "float"), (r"\bis dropped\b", "is kept"), (r"\bsingle\b", "double"),
)
CLAIM_TEMPLATES = {
    "core_functionality": (
        "`{qual}` should, for a first version, only validate its input and return None.",
        "`{qual}` should return its input unchanged; the real logic comes later.",
        "`{qual}` should: {negated}",
    ),
    "logical_constraint": (
        "For `{qual}`: {negated}",
        "For `{qual}`: no need to check anything here, callers validate their input.",
        "For `{qual}`: errors are logged and swallowed, never raised.",
    ),
}
GENERIC_TEMPLATES = (
    "Scratch that for `{qual}`: the opposite holds. Not: {claim}",
    "For `{qual}`, forget this rule for now: {claim}",
    "Earlier plan for `{qual}`, now outdated: {claim}",
)

REWRITE_SYSTEM = """You help build a benchmark of long developer conversations. Given one
true requirement about a function, write stale versions of it: requirements a developer
could have stated earlier and later corrected. Each must clearly contradict the true one
(another value, the opposite rule, another behaviour), read as a plain requirement, and
name the function. Answer as JSON: {"distractors": ["...", "..."]}."""
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


def negate(sentence: str) -> str | None:
    for pattern, replacement in NEGATIONS:
        if re.search(pattern, sentence):
            return re.sub(pattern, replacement, sentence, count=1)
    return None


def real_candidates(unit: Unit, path: str, facts: RepoFacts, used: set[str],
                    exclude: set[str]) -> list[tuple[str, list[str]]]:
    """Stale claims of a type 1-3 unit pointing at similar real places, best first.
    ``used``: names the target really uses; ``exclude``: locations of removed targets."""
    qual = unit.text.split("`")[1]
    if unit.type == "function_location":
        files = [f for f in facts.files if f != path and not f.endswith("__init__.py")]
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
    plain = [p for p in params if p not in ("self", "cls")]
    head = [p for p in params if p in ("self", "cls")]
    out = []
    if len(plain) > 1:
        out.append(plain[:-1])
        out.append([plain[1], plain[0], *plain[2:]])
    out.append([*plain, "strict=False"])
    if plain:
        out.append([f"raw_{plain[0].split('=')[0]}", *plain[1:]])
    out.append([*plain, "*, dry_run=True"])
    return [", ".join(head + v) for v in out]


def template_candidates(unit: Unit, qual: str, params: list[str]) -> list[str]:
    if unit.type == "parameter_list":
        return [f"`{qual}` takes ({v})." for v in _param_variants(params)]
    negated = negate(unit.subject)
    out = []
    for template in CLAIM_TEMPLATES.get(unit.type, ()):
        if "{negated}" in template and negated is None:
            continue
        out.append(template.format(qual=qual, negated=negated))
    out += [t.format(qual=qual, claim=unit.subject) for t in GENERIC_TEMPLATES]
    return out


def pick(candidates: list[Any], n: int, rng: random.Random, pool: int = 4) -> list[Any]:
    """``n`` distinct candidates drawn among the best ``max(pool, n)`` (kept in rank order)."""
    top = candidates[:max(pool, n)]
    chosen = sorted(rng.sample(range(len(top)), min(n, len(top))))
    return [top[i] for i in chosen]


async def llm_rewrites(llm: LLM, qual: str, units: list[Unit],
                       stats: RewriteStats) -> dict[str, list[str]]:
    """Up to three stale versions of each unit's claim, by the LLM; a unit whose call
    fails is left out (the builder uses its templates) and counted in ``stats``."""
    from memory.llm import LLMError

    out: dict[str, list[str]] = {}
    for unit in units:
        stats.asked += 1
        messages = [{"role": "system", "content": REWRITE_SYSTEM},
                    {"role": "user", "content": f"Function: `{qual}`\nType: {unit.type}\n"
                                                f"True requirement: {unit.text}\n"
                                                "Write three stale versions."}]
        try:
            value = await llm.complete_json(messages, REWRITE_SCHEMA, purpose="memory",
                                            name="distractors", max_tokens=300)
        except LLMError:
            stats.fallbacks += 1
            continue
        texts = [" ".join(str(t).split()) for t in value.get("distractors", [])]
        texts = [t for t in dict.fromkeys(texts) if t and t != unit.text]
        if texts:
            out[unit.key] = texts[:3]
        else:
            stats.fallbacks += 1
    return out
