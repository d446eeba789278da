"""Revisions without cue words, for the ``cards`` graph: what a later statement supersedes
by what it says.

A developer rarely announces that a requirement replaces an earlier one; in LoCoEval's
conversations nothing does (distractors are plain statements of the same shape, only
their order tells which is current). So, for two facts about the same subject, the later
one supersedes the earlier when:

- **restating**: it says the same thing with a few words changed (a value swapped, a
  negation, an opposite word, another exception class): the two, without the subject's
  name, share most of their words in order (``RESTATE_WORDS``) and are close in meaning
  (MiniLM cosine ``RESTATE_COS``), or differ only in their values (code spans, numbers,
  quoted strings, CamelCase names);
- **paraphrase**: the two, without their leads, are close in meaning (``PARAPHRASE``)
  and not read as different aspects: the same claim said again in other words;
- **same constraint**: both are constraints (errors, validation, limits: the aspect is
  read from MiniLM similarity to prototype statements of each aspect) and close in
  meaning without their leads (``CONSTRAINT_NEAR``): a rule about the same condition;
  a statement that says it adds ("also", "as well") does not replace;
- **dependency**: both name a dependency in the same frame ("`f` needs `x`"), and the
  later name is close to the earlier one: a similar name, or the same module and the
  same kind of thing (class, function, exception, constant) with similar code in the
  repository; or the earlier name is *foreign* to the function's module (``ground``:
  the module neither defines nor imports it, nor its module, and the conversation places
  no function to write of that name there), the later one being said last. An unrelated
  new dependency adds to the earlier ones the module knows, and so
  does a close one when the module knows both (it has them at hand: a function there
  may use both: a similar name with a word more or fewer, or similar code); an
  alternative to the earlier name (one word of it swapped, ``names.swapped``) replaces
  it even then. Two names some function of the repository uses together
  (``ground.RepoReader.used_together``) are never close.
- **borrowed**: the earlier one describes another function of the repository (its
  claim, without the lead, is that function's documented behaviour: MiniLM cosine
  ``BORROWED`` to its docstring's first paragraph or to one of its sentences, and it
  keeps the words by which that sentence names its function: ``ground.misses_its_name``):
  a later statement about the subject that is not itself borrowed, and does not say it
  adds (in its first sentence), replaces it, be either a value statement ("must be
  `unicode`") or not. A statement about the function itself is never borrowed;
- **lent**: the earlier one, a claim of what the function does or must do (not a value
  nor a dependency), lies near a sentence of another function's docstring (``LENT``),
  nearer by ``LENT_MARGIN`` than the later claim lies to any, and nearer to that
  docstring than to the later claim: it is another writer's rewording of what the other
  function does (too far from its docstring to be **borrowed**), and the later claim
  about the function, which says what the function itself does or must do (its nearest
  prototypes are behaviour's or constraint's), replaces it. A rule of the function's own
  lies near no other docstring and stays;
- **description**: both describe what the function does (read by meaning, its name
  masked: closer to the behaviour prototypes than to the constraint and dependency ones
  by ``DESCRIBES``), neither a value statement, the later one not saying it adds ("also
  ..."): one account of what a function does holds, the latest, as for any other aspect;
  a detail said beside it says it adds. A rule it keeps (a constraint) is not replaced;
- **not used**: one says a dependency is not to be used and the other that it is
  ("should not reuse `g`" after "should reuse `g` from `m`", or the other way round;
  ``uses``).

Every comparison of two statements about one function is by what each says of it, its
name masked (``graph.said_of``): the shared name alone made "`f` sets the port." and
"Next: the parameters of `f`." near repeats.

The optional revision judge (``judge``) confirms the uncertain ones (same constraint,
dependency, borrowed, description) with a model, and decides alone one more case the
rules leave open: two descriptions one of which the reading does not take for one (a
new description or an added detail?).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from memory.backends.cards import ground
from memory.backends.cards.graph import (
    ADDITIVE,
    ContextGraph,
    Node,
    body,
    closed,
    frame,
    quotes,
    subject_key,
)
from memory.backends.cards.ground import RepoReader, documented, home, known, module_names
from memory.backends.cards.judge import RevisionJudge
from memory.backends.cards.names import kind, name_similarity, swapped
from memory.backends.cards.rules import (
    ADDS,
    ASPECT_MARGIN,
    BORROW_SEARCH,
    BORROWED,
    CONSTRAINT_NEAR,
    CONVENTION,
    DESCRIBED_APART,
    DESCRIBES,
    FIRST_SENTENCE,
    JUDGED_AT_MOST,
    LENT,
    LENT_MARGIN,
    NAME_CLOSE,
    NAME_NEAR,
    PARAPHRASE,
    PROTOTYPES,
    RESTATE_COS,
    RESTATE_MIN,
    RESTATE_WORDS,
    ROLE_CLOSE,
    SINGLE_OR_UNCLEAR,
    VALUE,
    VALUE_ASPECTS,
    WORD_RUN,
    subject_said,
)
from memory.backends.cards.rules import REVISION_ASPECTS as ASPECTS
from memory.backends.cards.uses import (
    contradicts_use,
    dependency,
    ruled_out,
    same_dependency,
)
from memory.index.embed import Embedder, cosine


def _without_subject(text: str, subject: str) -> str:
    key = subject_key(subject)
    if not key:
        return text
    return subject_said(key).sub(" ", text)


def words(text: str, subject: str = "") -> list[str]:
    """The lower-cased words of a statement, its subject's name left out."""
    return [w.lower().strip(".") for w in WORD_RUN.findall(_without_subject(text, subject))
            if w.strip(".")]


def value_frame(text: str, subject: str = "") -> str:
    """A statement with every value masked (code spans, quoted strings, numbers, CamelCase
    and snake_case names): two statements with the same value frame differ only in values."""
    masked = VALUE.sub(" _ ", _without_subject(text, subject))
    return " ".join(w.lower() for w in WORD_RUN.findall(masked))


def restates(new: str, old: str, subject: str, sim: float) -> float:
    """How much ``new`` restates ``old`` with something changed (0 when it does not):
    the same value frame, or most words in the same order and ``sim >= RESTATE_COS``."""
    a, b = words(new, subject), words(old, subject)
    if not a or not b:
        return 0.0
    frame_a, frame_b = value_frame(new, subject), value_frame(old, subject)
    if frame_a == frame_b and len(frame_a.split()) >= RESTATE_MIN and a != b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    common = sum(block.size for block in matcher.get_matching_blocks())
    ratio = matcher.ratio()
    if common >= RESTATE_MIN and ratio >= RESTATE_WORDS and sim >= RESTATE_COS:
        return ratio
    return 0.0


def adds(text: str) -> bool:
    """Whether a statement says it adds to what was said ("`f` should also ...",
    "Also, `f` ..."): in its first sentence, which relates it to what came before; a
    later sentence's "also" adds to the statement's own first one ("`f` should: Return
    the files under a directory. Also supports globs.")."""
    return bool(ADDS.search(FIRST_SENTENCE.split(text, 1)[0]))


@dataclass
class Revision:
    """An earlier node a new one supersedes, the similarity, the rule and whether a model
    should confirm it (``uncertain``)."""

    old: Node
    similarity: float
    rule: str
    uncertain: bool = False  # a model may confirm it (the judge, when on)
    judged_only: bool = False  # applied only when a model confirms it


class Reviser:
    """The cue-free rules, with the embedder (aspect prototypes), a way to read a
    name's definition in the repository (``code_of``: name -> code or "") and the
    repository's files and function search (``reader``, for ``ground`` and borrowed
    descriptions; None: neither rule applies)."""

    def __init__(self, embedder: Embedder, code_of: Callable[[str], str],
                 reader: RepoReader | None = None) -> None:
        self.embedder = embedder
        self.code_of = code_of
        self.reader = reader
        self._module_names: dict[str, frozenset[str]] = {}
        self._doc_vectors: dict[str, tuple[list[str], np.ndarray] | None] = {}
        self.borrowed_from: dict[str, str] = {}  # node id -> the function it describes
        self._prototypes: dict[str, np.ndarray] | None = None
        self._code_vectors: dict[str, np.ndarray | None] = {}
        self.aspects: dict[str, str] = {}  # node id -> aspect ("" when unclear)
        self.bodies: dict[str, np.ndarray] = {}  # node id -> the vector aspects were read from
        self.foreign_under: set[str] = set()  # nodes the foreign rule made give way
        self.close_under: set[str] = set()  # nodes a close name replaced (``at_hand``)
        self._read_at = reader.generation if reader is not None else 0
        self.describing: set[str] = set()  # nodes that describe what their function does
        self.claiming: set[str] = set()  # nodes that say what their function does or must do
        self.near_other: dict[str, float] = {}  # node id -> cosine to another's docstring
        self.nearest_doc: dict[str, tuple[str, str]] = {}  # claim -> (location, sentence)
        self._described: dict[str, np.ndarray] | None = None

    def _current(self) -> None:
        """Forget what was read of the repository once its index changed (an edit applied)."""
        if self.reader is not None and self._read_at != self.reader.generation:
            self._module_names, self._doc_vectors, self._code_vectors = {}, {}, {}
            self._read_at = self.reader.generation

    def _body(self, node: Node, graph_vector: np.ndarray) -> np.ndarray:
        return self.bodies.get(node.id, graph_vector)

    # -- aspects -----------------------------------------------------------------------
    def prototypes(self) -> dict[str, np.ndarray]:
        if self._prototypes is None:
            texts = [t for group in ASPECTS.values() for t in group]
            vectors = self.embedder.embed(texts)
            out, n = {}, 0
            for name, group in ASPECTS.items():
                out[name] = np.asarray(vectors[n:n + len(group)], dtype=np.float32)
                n += len(group)
            self._prototypes = out
        return self._prototypes

    def aspect(self, vector: np.ndarray) -> str:
        """The aspect a statement's (body) vector is closest to, "" when no aspect wins by
        ``ASPECT_MARGIN``."""
        scores = sorted(((float(np.max(cosine(vector, protos))), name)
                         for name, protos in self.prototypes().items()), reverse=True)
        (best, name), (second, _) = scores[0], scores[1]
        if best - second < ASPECT_MARGIN or (name == "convention" and best < CONVENTION):
            return ""
        return name

    def describes(self, vector: np.ndarray) -> bool:
        """Whether a statement's body (its subject masked) describes what the function
        does rather than a rule it keeps or a dependency it has: closer to the behaviour
        prototypes than to those of ``DESCRIBED_APART`` by ``DESCRIBES``."""
        scores = self._prototype_scores(vector)
        rival = max(scores[a] for a in DESCRIBED_APART)
        return scores["behaviour"] - rival >= DESCRIBES

    def _prototype_scores(self, vector: np.ndarray) -> dict[str, float]:
        if self._described is None:
            self._described = {a: np.asarray(self.embedder.embed(list(group)),
                                             dtype=np.float32)
                               for a, group in PROTOTYPES.items()}
        return {a: float(np.max(cosine(vector, p))) for a, p in self._described.items()}

    # -- dependencies -------------------------------------------------------------------
    def _code_vector(self, name: str) -> np.ndarray | None:
        self._current()
        if name not in self._code_vectors:
            code = self.code_of(name)
            self._code_vectors[name] = (np.asarray(self.embedder.embed([code[:2000]])[0],
                                                   dtype=np.float32) if code else None)
        return self._code_vectors[name]

    def replaces_dependency(self, new: str, old: str, *, at_hand: bool = False) -> float:
        """How close the dependency ``new`` names is to the one ``old`` names (0 when it
        adds instead: an unrelated name, or one a function of the repository uses beside
        it, or a name of another kind). ``at_hand``: the function's module knows both;
        then only an alternative to the earlier name replaces it (a word of it swapped, the
        same kind and module: ``lfu_cache`` after ``lru_cache``), not a name of similar
        code."""
        a, b = dependency(new), dependency(old)
        if a is None or b is None or a[0].lower() == b[0].lower():
            return 0.0
        names = name_similarity(a[0], b[0])
        one_module = ground.same_module(a[1], b[1])  # a path or a dotted name, as said
        if at_hand and not (one_module and names >= NAME_CLOSE and swapped(a[0], b[0])):
            return 0.0
        if kind(a[0], self.code_of(a[0])) != kind(b[0], self.code_of(b[0])):
            return 0.0  # a function does not stand in for a class (lfu_cache, TTLCache)
        if (names >= NAME_CLOSE and not at_hand) or (one_module and names >= NAME_NEAR):
            score = names
        else:
            va, vb = (self._code_vector(a[0]), self._code_vector(b[0])) if one_module \
                else (None, None)
            role = 0.0 if va is None or vb is None else float(cosine(va, vb[None, :])[0])
            score = role if role >= ROLE_CLOSE else 0.0
        together = score and self.reader is not None and self.reader.used_together(a[0], b[0])
        return 0.0 if together else score

    def replaces_under(self, new: str, old: str, names: frozenset[str] | None) -> float:
        """``replaces_dependency`` under a module knowing ``names`` (None: unknown): the
        two are at hand when it knows both."""
        both = names is not None and not self.foreign(new, names) \
            and not self.foreign(old, names)
        return self.replaces_dependency(new, old, at_hand=both)

    def home_of(self, graph: ContextGraph, subject: str) -> str:
        """The repository file said last as the place of ``subject`` ("" when none is, or
        when the repository has the function: then a dependency named for it is one its
        code does not use yet, an addition)."""
        reader = self.reader
        if reader is None or "::" in subject:
            return ""
        said = [n.statement for n in sorted(graph.about(subject), key=lambda n: n.turn)
                if not ADDITIVE.search(frame(n.statement))]
        return home(said, lambda p: bool(reader.source(p)))

    def known_in(self, graph: ContextGraph, where: str) -> frozenset[str] | None:
        """What the module at ``where`` knows (``names_in``) and the functions still to
        write that the conversation places there (their latest place said is ``where``):
        the plan says the module will define them. None when there is no such module."""
        names = self.names_in(where)
        if names is None:
            return None
        subjects = {n.subject for n in graph.of_type("fact")
                    if n.current and n.subject and "::" not in n.subject}
        planned = {s.split(".")[-1] for s in subjects if self.home_of(graph, s) == where}
        return names | planned

    def names_in(self, where: str) -> frozenset[str] | None:
        """The names the module at ``where`` knows (``ground``), None when there is none or
        it cannot be read."""
        if not where or self.reader is None:
            return None
        self._current()
        if where not in self._module_names:
            self._module_names[where] = module_names(self.reader.source(where))
        return self._module_names[where] or None

    def borrowed(self, text: str, subject: str, own: np.ndarray) -> tuple[str, float]:
        """The location of another function of the repository whose docstring says what
        ``text`` (vector ``own``, without its lead) claims about ``subject`` ("" when none
        does, or no repository search was given), and the highest cosine of the claim to
        a sentence of another function's docstring among those searched (0 when none)."""
        if self.reader is None:
            return "", 0.0
        self._current()
        mine = subject_key(subject)  # searched by the claim alone: the subject's name
        # would rank the functions named like it first, not the one the claim describes
        found, nearest = "", 0.0
        for location, code in self.reader.functions(_without_subject(body(text), subject),
                                                    BORROW_SEARCH):
            if subject_key(location) == mine:
                continue  # the function itself, as the repository documents it
            if location not in self._doc_vectors:
                said = documented(code)
                self._doc_vectors[location] = (said, np.asarray(
                    self.embedder.embed(said), dtype=np.float32)) if said else None
            doc = self._doc_vectors[location]
            if doc is None:
                continue
            best = int(np.argmax(sims := cosine(own, doc[1])))
            if float(sims[best]) > nearest:
                nearest = float(sims[best])
                self.nearest_doc[text] = (location, doc[0][best])
            if not found and sims[best] >= BORROWED and not ground.misses_its_name(
                    text, doc[0][best], location, subject):
                found = location
        return found, nearest

    def claims(self, vector: np.ndarray) -> bool:
        """Whether a statement's body says what its function does or must do rather than
        naming a value (a place, parameters, a dependency): its nearest prototypes are
        behaviour's or constraint's."""
        scores = self._prototype_scores(vector)
        return max(scores["behaviour"], scores["constraint"]) \
            > max(scores[a] for a in VALUE_ASPECTS)

    def lent_by_contrast(self, old: Node, new_near: float, new: np.ndarray,
                         vectors: dict[str, np.ndarray]) -> bool:
        """Whether an earlier claim about a function says what another function of the
        repository does, by contrast with a later claim about it (``new``, whose nearest
        other docstring is at ``new_near``): the earlier one is near another function's
        docstring (``LENT``), nearer by ``LENT_MARGIN`` than the later claim is to any, and
        nearer to it than to the later claim; not when it lacks a word by which that
        sentence names its function (``ground.misses_its_name``, as for borrowed claims)."""
        near = self.near_other.get(old.id, 0.0)
        if near < LENT or near - new_near < LENT_MARGIN:
            return False
        location, sentence = self.nearest_doc.get(old.content, ("", ""))
        if not location or ground.misses_its_name(old.content, sentence, location,
                                                  old.subject):
            return False  # a sibling's docstring but for the word naming the sibling
        said = float(cosine(new, self._body(old, vectors[old.id])[None, :])[0])
        return said < near

    def foreign(self, text: str, names: frozenset[str] | None) -> bool:
        """Whether the dependency a statement names is foreign to a module that knows
        ``names`` (False when the module is unknown)."""
        named = dependency(text)
        return names is not None and named is not None and not known(*named, names)

    # -- one new fact -----------------------------------------------------------------------
    def revisions(self, node: Node, vector: np.ndarray, body_vector: np.ndarray | None,
                  others: list[tuple[Node, float]], additive: bool,
                  vectors: dict[str, np.ndarray],
                  home_names: frozenset[str] | None = None) -> list[Revision]:
        """What ``node`` (a fact) supersedes among ``others`` (current earlier facts about
        its subject, with their cosine to it) that the cue rules did not catch;
        ``home_names``: what the subject's module knows (``names_in``)."""
        own = body_vector if body_vector is not None else vector
        shut = closed(node.statement)
        self.aspects[node.id] = mine = "" if additive or shut else self.aspect(own)
        self.bodies[node.id] = np.asarray(own, dtype=np.float32)
        lent, near_other = ("", 0.0) if additive or not node.subject else self.borrowed(
            node.content, node.subject, own)
        self.near_other[node.id] = near_other
        claiming = not additive and not shut and bool(node.subject) \
            and not adds(node.content) and self.claims(own)
        if claiming:
            self.claiming.add(node.id)
        if lent:
            self.borrowed_from[node.id] = lent
        # a description: not a value, nor an addition ("also ..."), a detail beside one
        describing = not additive and not shut and bool(node.subject) \
            and not adds(node.content) and self.describes(own)
        if describing:
            self.describing.add(node.id)
        found: list[Revision] = []
        asked: list[Revision] = []  # for the judge only: the closest descriptions
        for other, sim in others:
            if contradicts_use(node.statement, other.statement, node.subject):
                found.append(Revision(other, sim, "dependency:negated"))
                continue
            if ruled_out(node.statement, node.subject) or ruled_out(other.statement, node.subject):
                continue  # what is not to be used is no dependency a close name replaces
            if additive:
                if frame(other.statement) == frame(node.statement):
                    close = self.replaces_under(node.statement, other.statement, home_names)
                    if close:
                        found.append(Revision(other, close, "dependency", uncertain=True))
                    # a name its module does not know gives way to one it knows (both
                    # foreign: the place said may be a stale one, and both add)
                    elif self.foreign(other.statement, home_names) \
                            and not self.foreign(node.statement, home_names) \
                            and not same_dependency(node.statement, other.statement):
                        found.append(Revision(other, sim, "dependency:foreign", uncertain=True))
                continue
            if other.id in self.borrowed_from and not lent and not adds(node.content):
                found.append(Revision(other, sim, "borrowed", uncertain=True))
                continue
            if claiming and not closed(other.statement) and self.lent_by_contrast(
                    other, near_other, own, vectors):
                found.append(Revision(other, sim, "lent", uncertain=True))
                continue
            if describing and other.id in self.describing and not lent \
                    and not closed(other.statement):
                found.append(Revision(other, sim, "description", uncertain=True))
                continue
            if shut or closed(other.statement):
                continue  # a slot with values: the graph's same-slot rule decides
            score = restates(node.statement, other.statement, node.subject, sim)
            if score:
                found.append(Revision(other, max(sim, score), "restating"))
                continue
            theirs = self.aspects.get(other.id, "")
            if (mine and theirs and mine != theirs) or adds(node.content):
                continue  # other aspects, or a statement that says it adds
            near = float(cosine(own, self._body(other, vectors[other.id])[None, :])[0])
            if near >= PARAPHRASE:
                found.append(Revision(other, near, "paraphrase", uncertain=True))
            elif mine == theirs == "constraint" and near >= CONSTRAINT_NEAR:
                found.append(Revision(other, near, "aspect:constraint", uncertain=True))
            elif mine in SINGLE_OR_UNCLEAR and theirs in SINGLE_OR_UNCLEAR:
                asked.append(Revision(other, sim, "aspect:behaviour", uncertain=True,
                                      judged_only=True))
        asked.sort(key=lambda r: -r.similarity)
        found += asked[:JUDGED_AT_MOST]
        return found

    async def supersedes(self, graph: ContextGraph, node: Node, vector: np.ndarray,
                         body_vector: np.ndarray | None, taken: list[tuple[Node, float]],
                         judge: RevisionJudge | None) -> list[tuple[Node, float]]:
        """What the fact ``node`` supersedes by what it says, beside what the graph's rules
        found (``taken``); ``judge``, when given, confirms the uncertain revisions and
        decides the ones the rules leave to it."""
        if not node.subject or quotes(node.content):
            return []  # a retraction quoting its claim: the graph's cue rules decide
        done = {old.id for old, _ in taken}
        others = [o for o in graph.about(node.subject)
                  if o.id != node.id and o.id not in done and o.id in graph.vectors]
        sims = [float(cosine(vector, graph.vectors[o.id][None, :])[0]) for o in others]
        additive = bool(ADDITIVE.search(frame(node.statement)))
        found = []
        names = self.known_in(graph, self.home_of(graph, node.subject)) if additive else None
        for revision in self.revisions(node, vector, body_vector,
                                       list(zip(others, sims, strict=True)), additive,
                                       graph.vectors, names):
            if revision.judged_only and judge is None:
                continue
            if revision.uncertain and judge is not None:
                verdict = await judge.replaces(node.subject, revision.old.content,
                                               node.content)
                if verdict is False or (verdict is None and revision.judged_only):
                    continue
            if revision.rule == "dependency:foreign":
                self.foreign_under.add(revision.old.id)  # ``rehome`` may take it back
            elif revision.rule == "dependency":
                self.close_under.add(revision.old.id)  # so may it, for a close name
            found.append((revision.old, revision.similarity))
        return found
