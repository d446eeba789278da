"""CICL's decision utility for the ``cards`` backend: judgments, weights, two scorers.

A judgment estimates what a unit does to the next decision: the likely first action
without and with it, how much it shifts that action, how necessary it is, the
expected outcome uplift, the risk of negative transfer, a reason and a confidence.
The utility combines them with the fixed signed weights of CICL's public
implementation (stephen-guan-researcher/CICL, ``judgment_to_score``):

    cost    = min(1, tokens / 1000 + 0.2 * negative_transfer_risk)
    utility = 0.34 * action_shift + 0.26 * necessity + 0.28 * expected_outcome_uplift
              - 0.22 * negative_transfer_risk - 0.08 * cost

Two scorers share one interface (``await scorer.judge(query, units)``):
``ProxyScorer`` estimates the components without a model (necessity from being the
current statement about the subject the query names, or what such a statement points
at; shift and necessity scaled down for background units; negative transfer from
conflict degree, staleness and confidence), ``LLMScorer`` asks the model through
the structured-output path and falls back to the proxy for a unit whose judgment
did not parse (counted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memory.backends._topics import terms
from memory.backends.cards.graph import ContextGraph, Node, subject_key
from memory.backends.cards.rules import (
    BACKGROUND,
    COST_RISK,
    COST_TOKENS,
    SEARCH_LEAD,
    TYPE_PRIOR,
    W_COST,
    W_NECESSITY,
    W_RISK,
    W_SHIFT,
    W_UPLIFT,
)
from memory.llm.client import LLMError
from memory.llm.lenient_json import MalformedJSON

if TYPE_CHECKING:
    from memory.llm.client import LLM

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)  # what a constrained judge may answer
REPO_TYPES = ("symbol", "file")


@dataclass
class Judgment:
    no_context_action: str
    with_context_action: str
    action_shift: float
    necessity: float
    expected_outcome_uplift: float
    negative_transfer_risk: float
    reason: str
    confidence: float
    scorer: str = "proxy"


@dataclass(frozen=True)
class Candidate:
    """A unit up for selection, with what retrieval thought of it."""

    node: Node
    similarity: float  # cosine of query and unit
    lexical: float  # share of the query's terms in the unit
    via: str = "search"  # search | neighbour | repo
    rank: int | None = None  # repo: its place in the index's own (hybrid) ranking


def cost_penalty(tokens: int, risk: float) -> float:
    return min(1.0, tokens / COST_TOKENS + COST_RISK * risk)


def utility(j: Judgment, tokens: int) -> float:
    """The signed-weight aggregation of a judgment for a unit of ``tokens`` tokens."""
    return (W_SHIFT * j.action_shift + W_NECESSITY * j.necessity
            + W_UPLIFT * j.expected_outcome_uplift - W_RISK * j.negative_transfer_risk
            - W_COST * cost_penalty(tokens, j.negative_transfer_risk))


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, float(x)))


def query_words(query: str) -> set[str]:
    """The names and words of a query that a subject's key is looked up in."""
    return {subject_key(t) for t in terms(query)} | {w.lower() for w in query.split()}


def named_in(subject: str, query: str, words: set[str] | None = None) -> bool:
    """Whether the query names the subject (its last component, as a word); ``words``:
    the query's ``query_words``, when the caller tests many subjects against it."""
    key = subject_key(subject)
    if not key:
        return False
    words = query_words(query) if words is None else words
    return key in words or f"`{key}`" in query.lower()


class Scorer(Protocol):
    name: str

    async def judge(self, query: str, candidates: list[Candidate]) -> list[Judgment]: ...


class ProxyScorer:
    """The judgment estimated from the graph and retrieval, without a model."""

    name = "proxy"

    def __init__(self, graph: ContextGraph) -> None:
        self.graph = graph

    def one(self, query: str, c: Candidate, words: set[str] | None = None,
            focused: bool = False) -> Judgment:
        """``focused``: the query names a subject of the graph, so a unit about another
        one, that no fact about the named subject points at, is background."""
        node = c.node
        words = query_words(query) if words is None else words
        relevance = _clamp(0.6 * max(c.similarity, 0.0) + 0.4 * c.lexical)
        named = named_in(node.subject, query, words) if node.subject else False
        linked = not named and self.linked(node, query, words)
        # a query that names nothing (a where-is question in the developer's words):
        # the index's best hits are the evidence it has, not background
        lead = not focused and c.rank is not None and c.rank < SEARCH_LEAD
        background = not (named or linked or lead) and (node.type in REPO_TYPES or (
            focused and bool(node.subject) and node.type in ("fact", "code", "failure")))
        prior = 0.0 if background else TYPE_PRIOR.get(node.type, 0.0)
        if node.type == "fact":  # the current statement about the queried subject
            necessity = 1.0 if named else relevance + prior + (0.5 if linked else 0.0)
        elif node.type in ("code", "failure", "tests"):
            necessity = (0.8 if named else 0.4 if linked else 0.0) + 0.5 * relevance
        else:
            necessity = (0.5 if named else 0.4 if linked else 0.0) + 0.6 * relevance
        new_terms = set(terms(node.content)) - set(terms(query))
        novelty = min(1.0, len(new_terms) / 8)
        shift = relevance * (0.5 + 0.3 * novelty)
        if background:
            shift, necessity = BACKGROUND * shift, BACKGROUND * necessity
        shift = _clamp(shift + prior + (0.2 if named else 0.0))
        stale = bool(node.stale)
        risk = _clamp(0.1 * self.graph.conflict_degree(node.id) + (1 - node.confidence) * 0.5
                      + (0.65 if stale else 0.0) + (0.15 if c.via == "neighbour" else 0.0))
        necessity = _clamp(necessity)
        uplift = _clamp(0.68 * necessity + 0.24 * shift - 0.45 * risk)
        where = node.subject or (node.locations[0] if node.locations else "the repository")
        return Judgment(
            no_context_action=f"search the repository for what the query needs about {where}",
            with_context_action=_with_action(node, where),
            action_shift=round(shift, 6), necessity=round(necessity, 6),
            expected_outcome_uplift=round(uplift, 6), negative_transfer_risk=round(risk, 6),
            reason=("the current statement about a subject the query names" if named and
                    node.type == "fact" else f"{node.type} related to the query"
                    f" (similarity {c.similarity:.2f}, {c.via})"),
            confidence=round(0.72 if max(shift, uplift, risk) >= 0.55 else 0.58, 2))

    def linked(self, node: Node, query: str, words: set[str]) -> bool:
        """Whether a current fact about a subject the query names points at ``node``: the
        code of a dependency the developer asked for, the file a function belongs in, a
        fact about a function it must reuse."""
        for edge in self.graph.edges_of(node.id, ("contains", "precondition")):
            fact = self.graph.nodes.get(edge.src)
            if edge.dst == node.id and fact is not None and fact.type == "fact" \
                    and fact.current and fact.subject and named_in(fact.subject, query, words):
                return True
        return False

    async def judge(self, query: str, candidates: list[Candidate]) -> list[Judgment]:
        words = query_words(query)
        focused = any(named_in(c.node.subject, query, words) for c in candidates
                      if c.node.subject)
        return [self.one(query, c, words, focused) for c in candidates]


def _with_action(node: Node, where: str) -> str:
    """The proxy's action hint. A statement's or a symbol's names no place: its card's
    head and scope do (the place in every hint was 7 % of the prompt tokens on rfc3986)."""
    if node.type == "fact":
        return "update the code so that it follows this statement"
    if node.type == "code":
        return f"use the latest version of {where} written in this session"
    if node.type == "failure":
        return f"check why {where} failed before changing it again"
    if node.type == "tests":
        return "check the latest test results before changing the code they cover"
    if node.type == "summary":
        return "use what an earlier session decided"
    return "read this code before calling or changing it"


JUDGE_PROMPT = """You decide which memory a coding assistant should see before it acts.
Given the developer's request and one candidate memory, estimate whether showing the
memory would change the assistant's next action and the outcome:
- no_context_action / with_context_action: the likely first action without / with it.
- action_shift: 0 no change of the next step, 1 a clearly different file, function or edit.
- necessity: 0 optional background, 1 the request cannot be done right without it.
- expected_outcome_uplift: 0 no gain, 1 much more likely to succeed.
- negative_transfer_risk: 0 safe, 1 likely to mislead (outdated, conflicting, off-topic).
- reason: a few words; confidence: how sure you are of this judgment.
Answer with JSON only."""
# {"no_context_action": str, "with_context_action": str, "action_shift": 0..1,
#  "necessity": 0..1, "expected_outcome_uplift": 0..1, "negative_transfer_risk": 0..1,
#  "reason": str, "confidence": 0..1}
_NUMBERS = ("action_shift", "necessity", "expected_outcome_uplift", "negative_transfer_risk",
            "confidence")
_WORDS = "^[A-Za-z0-9_`'.,:;()/ -]*$"


def judge_schema(constrained: bool) -> dict[str, Any]:
    """The judgment schema; a constrained model picks each number among ``LEVELS`` and
    writes short plain strings (a pattern, not a bounded length: faster grammars)."""
    number: dict[str, Any] = ({"enum": list(LEVELS)} if constrained
                              else {"type": "number", "minimum": 0, "maximum": 1})
    text: dict[str, Any] = {"type": "string", "pattern": _WORDS} if constrained \
        else {"type": "string"}
    props = {"no_context_action": text, "with_context_action": text,
             **{k: number for k in _NUMBERS[:4]}, "reason": text, "confidence": number}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


class LLMScorer:
    """CICL's LLM judge: one structured call per candidate (the best ``limit`` by the
    proxy; the others keep the proxy's judgment)."""

    name = "llm"

    def __init__(self, graph: ContextGraph, llm: LLM, limit: int = 8) -> None:
        self.proxy = ProxyScorer(graph)
        self.llm = llm
        self.limit = limit
        self.fallbacks = 0  # judgments that did not parse and fell back to the proxy

    async def judge(self, query: str, candidates: list[Candidate]) -> list[Judgment]:
        proxy = await self.proxy.judge(query, candidates)
        order = sorted(range(len(candidates)),
                       key=lambda i: -utility(proxy[i], candidates[i].node.tokens))
        schema = judge_schema(self.llm.constrained())
        out = list(proxy)
        for i in order[:self.limit]:
            node = candidates[i].node
            user = (f"Request: {query}\n\nCandidate memory ({node.type}, from {node.source}"
                    f"{', about ' + node.subject if node.subject else ''}):\n"
                    f"{node.content[:1500]}\nAnswer:")
            try:
                data = await self.llm.ask_json(JUDGE_PROMPT, user, schema, name="judgment",
                                               max_tokens=200)
                out[i] = self._parse(data)
            except (MalformedJSON, LLMError, ValueError, TypeError):
                self.fallbacks += 1
        return out

    @staticmethod
    def _parse(data: Any) -> Judgment:
        if not isinstance(data, dict):
            raise MalformedJSON("judgment is not an object")
        numbers = {k: _clamp(float(data[k])) for k in _NUMBERS}
        return Judgment(str(data.get("no_context_action", "")),
                        str(data.get("with_context_action", "")),
                        numbers["action_shift"], numbers["necessity"],
                        numbers["expected_outcome_uplift"], numbers["negative_transfer_risk"],
                        str(data.get("reason", "")), numbers["confidence"], scorer="llm")
