"""The instance context graph of the ``cards`` backend: nodes, typed edges, revisions.

Nodes are what a later decision may need (CICL's context units): facts the developer
stated, repository symbols and files they are about, code the assistant wrote,
failures (tracebacks, test output) seen in the chat, test runs among the tool calls
(``tests``: a command's outcome), summaries of earlier sessions.
Each has an id, a type, a source, its content, its token cost and a confidence.

Edges: ``contains`` (fact, code or failure -> the symbol or file it is about),
``similar`` (two units close in meaning), ``conflict`` (a later unit revises an
earlier one about the same subject: the earlier is superseded, kept for history,
never current), ``precondition`` (a fact that names another subject -> the current
facts about that subject), ``task`` (units that came from the same turn).

Revision is decided without a model: the same subject, and near-identical meaning
(cosine >= ``REVISE``), the same slot, or what ``revise`` reads from the two
statements (a restated value, a constraint about the same condition, a close
dependency): no cue word is needed. Cues still help when they are there: a revision
cue in the newer fact ("actually", "instead", "scratch that", ...) or an earlier
statement that said it was provisional ("for now", "for a first version"). A fact
without a subject is compared by meaning alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from memory.backends.cards import params
from memory.backends.cards.rules import (
    ADDITIVE,
    CLAIM_LEAD,
    CLOSED_WORDS,
    CODE_SPAN,
    CUES,
    LEAD,
    LEAD_MARKERS,
    LEAD_ONLY_WORDS,
    LED,
    MASK_CLASS,
    MASK_SUBJECT,
    NAME_JOINS,
    NUMBER,
    PREDICATE,
    PROVISIONAL,
    PROVISIONAL_SAID,
    REMARK,
    RETRACTING,
    REVISE,
    REVISE_AGAIN,
    REVISE_CUED,
    SENTENCE_BREAK,
    SIMILAR,
    SIMILAR_EDGES,
    SPACE_BEFORE_STOP,
    WORD_RUN,
    class_said,
    function_said,
)
from memory.index.embed import cosine

NODE_TYPES = ("fact", "symbol", "file", "code", "failure", "tests", "summary")
EDGE_TYPES = ("contains", "similar", "conflict", "precondition", "task")


def provisional(text: str) -> bool:
    """Whether a statement says it holds only until something better is decided."""
    return bool(PROVISIONAL_SAID.search(text)) and not revision_cue(text)


def predicate(text: str) -> str:
    """The verb after a statement's first code span ("`f` should ..." -> "should")."""
    match = PREDICATE.search(text)
    return match.group(1).lower() if match else ""


def revision_cue(text: str) -> bool:
    """Whether a statement says it revises an earlier one."""
    return bool(CUES.search(text))


def frame(text: str) -> str:
    """A statement with its values masked: code spans, argument lists and numbers.

    Two statements about one subject with the same frame set the same slot
    ("`f` belongs in `a.py`" / "`f` belongs in `b.py`"; "`f` takes (a)" / "(a, b)")."""
    masked = CODE_SPAN.sub("`_`", REMARK.sub("", text.strip(), count=1))
    masked = NUMBER.sub("0", params.masked(masked, "(_)"))
    return " ".join(LEAD.sub("", masked).lower().rstrip(" .;:!").split())


def closed(text: str) -> bool:
    """Whether a statement is a short one whose predicate takes values (code spans beside
    its subject, an argument list): then only its slot says what it revises."""
    shape = frame(text)
    return (shape.count("`_`") >= 2 or "(_)" in shape) and len(shape.split()) <= CLOSED_WORDS


def _last_cue(text: str) -> tuple[str, str | None]:
    """A statement's last revision cue ("" when none) and what it quotes after a colon:
    the rest of the statement after a cue ending in one ("Not: X"), else what follows
    the first ": " after the cue ("forget this rule: X"); None when there is no colon."""
    cues = list(CUES.finditer(text))
    if not cues:
        return "", None
    cue, rest = cues[-1].group(0), text[cues[-1].end():]
    if cue.endswith(":"):
        return cue, rest.strip()
    _, sep, tail = rest.partition(": ")
    return cue, (tail.strip() if sep and tail.strip() else None)


def claim(text: str) -> str:
    """What a statement with a revision cue is about: what follows its last cue, after
    a colon ("Scratch that for `f`: the opposite holds. Not: X" -> "X"; "For `f`,
    forget this rule for now: X" -> "X"), else the statement without its cue words."""
    cue, quoted = _last_cue(text)
    if not cue:
        return text
    if quoted is not None:
        return quoted or text
    bare = SPACE_BEFORE_STOP.sub(r"\1", " ".join(CUES.sub(" ", text).split())).strip(" ,;")
    return bare or text  # "Actually, X instead." -> "X"


def body(text: str) -> str:
    """A statement without its lead naming the subject ("For `f`: X" -> "X", "`f`
    should: X" -> "X"), to compare with what a retraction quoted."""
    match = LED.match(text.strip())
    return text.strip()[match.end():] if match else text


def said_of(text: str, subject: str) -> str:
    """What a statement says of its subject: its ``body`` with the subject's name, however
    it is said (bare, quoted, dotted with its class, "``C``'s ``f``", "``f`` on ``C``"),
    read as "the function" and its class as "the class", and the words tying it to what
    is said left out when they lead (``CLAIM_LEAD``), as are sentences and a lead before a
    colon that only say a claim follows (``_claim_only``). Two statements about one
    function are compared by this: their shared name would otherwise make any two close
    ("`f` sets the port." / "Next: the parameters of `f`.")."""
    parts = [p for p in NAME_JOINS.split(subject.rsplit("::", 1)[-1]) if p]
    said = body(text)
    if not parts or "/" in parts[-1]:
        return said
    *owners, name = parts
    said = function_said(name).sub(MASK_SUBJECT, said)
    for owner in owners:
        said = class_said(owner).sub(MASK_CLASS, said)
    said = _claim_only(" ".join(said.split()))
    claim = CLAIM_LEAD.sub("", said, count=1)
    return claim if any(c.isalnum() for c in claim) else said  # "f should." stays whole


def _lead_only(part: str) -> bool:
    words = [w for w in (w.lower().strip(".") for w in WORD_RUN.findall(part)) if w]
    return bool(words) and all(w in LEAD_ONLY_WORDS for w in words) \
        and any(w in LEAD_MARKERS for w in words)


def _claim_only(text: str) -> str:
    """``text`` without its sentences, and a lead before its first colon, that only say a
    claim follows or came before (``LEAD_ONLY_WORDS``); whole when that is all it says."""
    kept = [p for p in SENTENCE_BREAK.split(text) if p and not _lead_only(p)]
    text = " ".join(kept) if kept else text
    head, sep, rest = text.partition(": ")
    return rest if sep and _lead_only(head) and not _lead_only(rest) and rest.strip() \
        else text


def quotes(text: str) -> bool:
    """Whether a cued statement quotes what it retracts after a colon ("Not: X", "forget
    this rule: X", "Earlier plan, now outdated: X"): then only a statement saying nearly
    X is what it retracts. A replacing cue ("Correction: X", "Actually, for `f`: X")
    introduces the new value, not a quote."""
    cue, quoted = _last_cue(text)
    return bool(cue) and bool(RETRACTING.match(cue)) and quoted is not None


def slot(text: str) -> str:
    """The slot a statement sets: its frame, plus the first value after the subject for
    predicates that hold several values (``needs `re``` and ``needs `json``` differ)."""
    shape = frame(text)
    if not shape or not ADDITIVE.search(shape):
        return shape
    spans = CODE_SPAN.findall(text)
    return f"{shape} | {spans[1].lower() if len(spans) > 1 else ''}"


@dataclass
class Node:
    """One unit of the graph. ``tokens`` is the cost of showing ``content`` itself;
    ``origin_tokens`` the cost of what it was taken from (a fact's whole turn)."""

    id: str
    type: str
    source: str  # "turn:3", "repo", "session:<id>"
    content: str
    tokens: int
    confidence: float = 1.0
    subject: str = ""  # the function, class or file it is about ("" when none)
    locations: list[str] = field(default_factory=list)  # resolved repository locations
    turn: int = -1
    origin_tokens: int = 0
    superseded_by: str = ""  # the node that revised this one ("" while current)
    stale: str = ""  # why the code it describes may have changed ("" while valid)
    alarm: str = ""  # how code written since breaks this fact ("" while respected)
    form: str = ""  # a value statement in one phrasing per aspect (``reading``), "" if none

    @property
    def current(self) -> bool:
        return not self.superseded_by

    @property
    def statement(self) -> str:
        """What the slot and dependency rules read: its ``form`` when it has one (whatever
        the developer's phrasing), else its content."""
        return self.form or self.content


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    kind: str
    weight: float = 1.0


def subject_key(subject: str) -> str:
    """The comparable form of a subject: its last component (``a/b.py::C.f`` -> ``f``)."""
    last = subject.split("::")[-1].split(".")[-1] if "::" in subject else subject
    if "::" not in subject and "/" in subject:
        last = subject.rsplit("/", 1)[-1]
    return last.strip("`()").lower()


class ContextGraph:
    """Nodes, edges and node vectors of one session (in process)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.vectors: dict[str, np.ndarray] = {}
        self.claims: dict[str, np.ndarray] = {}  # the claim vectors of cued statements
        self.bodies: dict[str, np.ndarray] = {}  # statements without their lead (``body``)
        self._out: dict[str, list[Edge]] = {}
        self._in: dict[str, list[Edge]] = {}

    # -- building --------------------------------------------------------------------
    def add(self, node: Node, vector: np.ndarray | None = None) -> Node:
        """Add ``node`` (an existing id is kept as it is and returned)."""
        have = self.nodes.get(node.id)
        if have is not None:
            return have
        self.nodes[node.id] = node
        if vector is not None:
            self.vectors[node.id] = np.asarray(vector, dtype=np.float32)
        return node

    def link(self, src: str, dst: str, kind: str, weight: float = 1.0) -> Edge | None:
        """Add an edge once; None when it exists or joins a node to itself."""
        if kind not in EDGE_TYPES:
            raise ValueError(f"unknown edge type {kind!r}")
        if src == dst or any(e.dst == dst and e.kind == kind for e in self._out.get(src, [])):
            return None
        edge = Edge(src, dst, kind, round(float(weight), 4))
        self.edges.append(edge)
        self._out.setdefault(src, []).append(edge)
        self._in.setdefault(dst, []).append(edge)
        return edge

    def supersede(self, new: Node, old: Node, similarity: float) -> Edge | None:
        """``new`` revises ``old``: a conflict edge, and ``old`` leaves the current state."""
        edge = self.link(new.id, old.id, "conflict", similarity)
        old.superseded_by = new.id
        return edge

    def restore(self, old: Node) -> None:
        """Take a revision back: ``old`` is current again, the conflict edge gone."""
        new_id, old.superseded_by = old.superseded_by, ""
        edge = next((e for e in self._out.get(new_id, [])
                     if e.dst == old.id and e.kind == "conflict"), None)
        if edge is not None:
            self.edges.remove(edge)
            self._out[new_id].remove(edge)
            self._in[old.id].remove(edge)

    def revisions(self, node: Node, vector: np.ndarray,
                  claim_vector: np.ndarray | None = None,
                  body_vector: np.ndarray | None = None) -> list[tuple[Node, float]]:
        """The current nodes of ``node``'s type, about its subject, that ``node`` revises,
        with their similarity:
        - code: the earlier version of the same function;
        - statements whose predicates take values (``closed``): the same slot set again;
        - other statements: a near repeat (cosine >= ``REVISE``), or the same slot;
          with a revision cue, also the one statement its claim (``claim_vector``) is
          closest to, from ``REVISE_CUED`` (``REVISE_AGAIN`` when the claim is quoted:
          "Not: X" retracts X, not a statement that merely shares X's words);
        - a statement that says again what an earlier cued one retracted revises the
          retraction (it, or its ``body_vector``, at ``REVISE_AGAIN`` or closer to the
          retracted claim);
        - a statement of the same predicate as an earlier ``provisional`` one ("`f`
          should, for now, return None") replaces the closest such (``PROVISIONAL``)."""
        found: list[tuple[Node, float]] = []
        cued = revision_cue(node.content)
        least = REVISE_AGAIN if cued and quotes(node.content) else REVISE_CUED
        key = subject_key(node.subject)
        mine = slot(node.statement)
        best: tuple[Node, float] | None = None  # what a cued statement retracts
        draft: tuple[Node, float] | None = None  # the provisional statement it replaces
        for other in self.of_type(node.type):
            if other.id == node.id or not other.current or other.id not in self.vectors:
                continue
            if node.type == "code":  # a new version of a function replaces the old one
                if key and subject_key(other.subject) == key:
                    found.append((other, 1.0))
                continue
            if key != subject_key(other.subject):
                continue
            sim = float(cosine(vector, self.vectors[other.id][None, :])[0])
            same_slot = node.type == "fact" and mine == slot(other.statement)
            # a near repeat by what the two say of their subject, its name masked
            near = sim if node.type != "fact" else float(cosine(
                vector if body_vector is None else body_vector,
                self.bodies.get(other.id, self.vectors[other.id])[None, :])[0])
            if node.type == "fact" and closed(node.statement) and closed(other.statement):
                if same_slot:
                    found.append((other, sim))
                continue
            if same_slot or near >= REVISE:
                found.append((other, sim))
                continue
            if cued and claim_vector is not None and not closed(other.statement) \
                    and not closed(node.statement):  # a value statement: its slot decides
                to_claim = max(float(cosine(claim_vector, v[None, :])[0]) for v in (
                    self.vectors[other.id], self.bodies.get(other.id)) if v is not None)
                if to_claim >= least and (best is None or to_claim > best[1]):
                    best = (other, to_claim)
            retracted = self.claims.get(other.id)
            if not cued and retracted is not None and quotes(other.content):  # retracted X
                again = max(float(cosine(v, retracted[None, :])[0])
                            for v in (vector, body_vector) if v is not None)
                if again >= REVISE_AGAIN:
                    found.append((other, again))
            if node.type == "fact" and not cued and sim >= PROVISIONAL \
                    and provisional(other.content) and not ADDITIVE.search(frame(node.statement)) \
                    and predicate(node.statement) == predicate(other.statement) != "" \
                    and (draft is None or sim > draft[1]):
                draft = (other, sim)
        found += [pair for pair in (best, draft) if pair is not None]
        return found

    def similar_to(self, node: Node, vector: np.ndarray,
                   threshold: float = SIMILAR) -> list[tuple[Node, float]]:
        """Current nodes (facts, code, failures, summaries) close to ``vector``."""
        ids = [i for i, n in self.nodes.items() if i != node.id and n.current
               and n.type in ("fact", "code", "failure", "tests", "summary") and i in self.vectors]
        if not ids:
            return []
        sims = cosine(vector, np.stack([self.vectors[i] for i in ids]))
        ranked = sorted(((self.nodes[i], float(s)) for i, s in zip(ids, sims, strict=True)
                         if s >= threshold), key=lambda p: -p[1])
        return ranked[:SIMILAR_EDGES]

    # -- reading ------------------------------------------------------------------------
    def of_type(self, kind: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.type == kind]

    def current(self) -> list[Node]:
        return [n for n in self.nodes.values() if n.current]

    def superseded(self) -> list[Node]:
        return [n for n in self.nodes.values() if not n.current]

    def about(self, subject: str) -> list[Node]:
        """Current facts whose subject is ``subject`` (compared by last component)."""
        key = subject_key(subject)
        return [n for n in self.of_type("fact") if n.current and key
                and subject_key(n.subject) == key]

    def edges_of(self, node_id: str, kinds: Iterable[str] | None = None) -> list[Edge]:
        wanted = set(kinds) if kinds is not None else set(EDGE_TYPES)
        return [e for e in (*self._out.get(node_id, []), *self._in.get(node_id, []))
                if e.kind in wanted]

    def neighbours(self, node_id: str) -> list[Node]:
        """Current nodes one edge away (any direction), conflict edges excluded: what a
        revision replaced is history, not context."""
        found: list[Node] = []
        for edge in self.edges_of(node_id):
            if edge.kind == "conflict":
                continue
            other = self.nodes.get(edge.dst if edge.src == node_id else edge.src)
            if other is not None and other.current and other not in found:
                found.append(other)
        return found

    def conflict_degree(self, node_id: str) -> int:
        return len(self.edges_of(node_id, ("conflict",)))

    def revised(self, node_id: str) -> list[Node]:
        """The nodes ``node_id`` superseded."""
        return [self.nodes[e.dst] for e in self._out.get(node_id, []) if e.kind == "conflict"]
