"""Building the ``cards`` context graph from a committed turn.

One structured call extracts the developer's facts with their repository locations
(under constrained decoding the facts are chosen among the developer's own sentences
and the locations among the names of the exchange that resolve in the repository,
as mem0r does). A developer's line longer than a fact may be (300 characters: a pasted
requirement, a docstring with examples) that the extractor took nothing from is kept
whole, rather than lost to the schema's bound. Everything else is deterministic:
locations resolve through the RepoIndex, a fact's subject is the first code-like name
it mentions (else a location the extractor gave, else a plain word naming a repository
function), code blocks come from the answer (first definition = the function),
failures are the tracebacks and test output in either side of the exchange. A message
of plain questions costs no call. When the extraction call fails, the developer's
statements are kept as facts with a lower confidence (counted). By
default (``cards_facts=read``) the extractor sees only the lines whose function the
reading does not find: a line it places is kept as said, and a message whose lines it
all places costs no call (``cards_facts=llm``: every message goes to the extractor). With
``cards_facts=said`` there is no call at all: each line of the developer's (questions
cut off, code left out) is a fact as said, its locations the names it mentions; the
utility scoring and the packing then choose what a context shows.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memory.backends.base import exchange
from memory.backends.cards.failures import failures
from memory.backends.cards.graph import (
    ContextGraph,
    Node,
    body,
    claim,
    revision_cue,
    said_of,
    subject_key,
)
from memory.backends.cards.ground import RepoReader, imported_modules, imported_names
from memory.backends.cards.judge import JUDGES, RevisionJudge
from memory.backends.cards.reading import Lexicon, Reader, Reading
from memory.backends.cards.rehome import rehome
from memory.backends.cards.revise import Reviser
from memory.backends.cards.rules import (
    EXTRACTED_CONFIDENCE,
    FALLBACK_CONFIDENCE,
    FENCED,
    LONG_WORD,
    WORD_RUN,
    function_said,
)
from memory.backends.cards.said import (
    RawFact,
    asks,
    long_statements,
    said_statements,
    without_questions,
)
from memory.backends.cards.uses import negated_in, negates_use
from memory.backends.codemem.syntax import code_blocks, first_definition
from memory.backends.mem0 import fact_key, statements
from memory.backends.mem0r import MAX_CANDIDATES, exchange_names, extract_schema_r
from memory.index.embed import whole_words
from memory.index.repo import LocationRefused
from memory.llm.client import LLMError
from memory.llm.lenient_json import MalformedJSON
from memory.types import Turn

if TYPE_CHECKING:
    from memory.backends.base import BackendEnv

FACT_MODES = ("read", "llm", "said")
CLIP_CHARS = 2000
ANSWER_CHARS = 600  # of the assistant's prose the extractor reads (its code: code units)


FACT_PROMPT = """You keep the decision memory of a coding assistant working in a git repository.
From one exchange between the developer and the assistant, list what a later turn has to
respect: requirements and their revisions, decisions, constraints, conventions, and facts
about the code. One sentence per fact, in the developer's own words. For each fact, give
the repository locations it concerns, chosen only among names that appear in the exchange.

Example.
Developer: slugify in app/text.py must lower-case its result.
Assistant: Done.
Answer: {"facts": [{"text": "slugify in app/text.py must lower-case its result.",
"locations": ["app/text.py::slugify"]}]}

Nothing to keep: {"facts": []}"""
# {"facts": [{"text": "sentence", "locations": ["path::Qual.name", ...]}]}


def _clip(text: str) -> str:
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + " [...]"


def _beside(long: list[RawFact], facts: list[RawFact]) -> list[RawFact]:
    """``facts``, then each long statement none of them was taken from: what the
    extractor could not carry in one fact is kept rather than lost."""
    taken = [fact_key(f.text) for f in facts]
    return facts + [w for w in long if not any(t and t in fact_key(w.text) for t in taken)]


def _in_order(said: list[RawFact], read: list[RawFact], extracted: list[RawFact]) -> list[RawFact]:
    """The statements the reading placed and the extractor's facts of the other lines, in
    the order they were said (a later statement may revise an earlier one of the turn)."""
    out: list[RawFact] = []
    left = list(extracted)
    for fact in said:
        if any(fact is r for r in read):
            out.append(fact)
            continue
        line = fact_key(fact.said or fact.text)
        taken = [e for e in left if fact_key(e.text) and fact_key(e.text) in line]
        out += taken
        left = [e for e in left if not any(e is t for t in taken)]
    return out + left


@dataclass
class TurnReport:
    """What one turn added to the graph."""

    added: list[Node] = field(default_factory=list)
    superseded: list[tuple[Node, Node]] = field(default_factory=list)  # (new, old)
    restored: list[Node] = field(default_factory=list)  # revisions taken back (``rehome``)
    skipped: str = ""


class GraphBuilder:
    """Turns committed turns into nodes and edges of a ``ContextGraph``."""

    def __init__(self, env: BackendEnv, graph: ContextGraph) -> None:
        self.env = env
        self.graph = graph
        self._names: frozenset[str] | None = None
        self._names_at = 0  # the index's generation they were read at
        self.reviser = Reviser(env.embedder, self.code_of, RepoReader(env.repo))
        self.reader = Reader(env.embedder)
        self._lexicon: tuple[int, Lexicon] | None = None  # the index generation, its names
        self._read: tuple[list[str], list[Reading]] = ([], [])  # the last statements read
        self._unread: set[str] = set()  # facts the reading found no subject of (their ids)
        judge = str(env.options.get("cards_judge", "off"))
        if judge not in JUDGES:
            raise ValueError(f"cards_judge must be one of {', '.join(JUDGES)}, not {judge!r}")
        self.judge = RevisionJudge(env.llm) if judge == "llm" else None
        self.facts = str(env.options.get("cards_facts", "read"))
        if self.facts not in FACT_MODES:
            raise ValueError(f"cards_facts must be one of {', '.join(FACT_MODES)}, "
                             f"not {self.facts!r}")

    def code_of(self, name: str) -> str:
        """The definition of ``name`` in the repository ("" when it has none)."""
        resolved = self.resolve(name)
        return resolved[2] if resolved is not None else ""

    # -- locations --------------------------------------------------------------------
    def resolve(self, name: str) -> tuple[str, str, str] | None:
        """(location, kind, code) of a name in the repository, or None."""
        repo = self.env.repo
        if repo is None or not name or "\x00" in name:
            return None
        try:
            found = repo.locate(name)
        except LocationRefused:
            return None
        if found is None:
            return None
        return found.chunk.location, found.chunk.kind, found.chunk.code

    def candidates(self, turn: Turn) -> list[str]:
        """Resolved locations of the exchange's code-like names (the extractor's choices)."""
        kept: list[str] = []
        for name in exchange_names(f"{turn.user}\n{turn.assistant}"):
            resolved = self.resolve(name)
            if resolved is not None:
                kept.append(resolved[0])
        return list(dict.fromkeys(kept))[:MAX_CANDIDATES]

    def symbol(self, location: str) -> Node | None:
        """The symbol (or file) node of a location, added to the graph on first use."""
        resolved = self.resolve(location)
        if resolved is None:
            return None
        where, kind, code = resolved
        node_type = "file" if kind == "module" else "symbol"
        node_id = f"{'file' if node_type == 'file' else 'sym'}:{where}"
        if node_id in self.graph.nodes:
            return self.graph.nodes[node_id]
        return self.graph.add(Node(node_id, node_type, "repo", code, self.env.count(code),
                                   subject=where, locations=[where]))

    # -- facts --------------------------------------------------------------------------
    async def extract(self, turn: Turn) -> tuple[list[RawFact], str]:
        """The turn's facts, and why the extractor's answer was not used ('' when it was).
        ``read`` (the default): a line of the developer's whose function the reading finds
        (``reading``: a name of the repository or of the conversation) is kept as said; only
        the other lines go to the extractor, and a message whose lines the reading all
        places costs no call. ``llm``: the extractor reads every message. ``said``: the
        developer's lines, no call. A statement too long for one extracted fact, that the
        extractor took nothing from, is kept whole."""
        if self.facts == "said":
            return said_statements(turn.user), ""
        if self.facts == "llm":
            return await self._extracted(turn)
        said = said_statements(turn.user)
        if not said:  # only questions: nothing of the developer's to keep, no call
            return [], ""
        readings = await self.read(said)
        read = [f for f, r in zip(said, readings, strict=True) if r.subject]
        rest = [f for f, r in zip(said, readings, strict=True) if not r.subject]
        if not rest:  # the reading places every statement: kept as said, no call
            return read, ""
        facts, why = await self._extracted(replace(turn, user="\n".join(
            f.said or f.text for f in rest)))
        return _in_order(said, read, facts), why

    async def _extracted(self, turn: Turn) -> tuple[list[RawFact], str]:
        """The extractor's facts of ``turn`` (its developer's lines the reading did not
        place), and why its answer was not used."""
        llm = self.env.llm
        texts = [t for t in statements(turn.user) if not asks(t)]
        if not texts:  # nothing to extract from: "Where does f go? In m.py." kept as said
            return said_statements(turn.user), ""
        long = [RawFact(t, [], EXTRACTED_CONFIDENCE) for t in long_statements(turn.user)]
        if llm.constrained():
            schema = extract_schema_r(self.candidates(turn), texts)
        else:
            schema = extract_schema_r(None)
        try:
            said = replace(turn, assistant=_clip(FENCED.sub("[code]", turn.assistant)))
            data = await llm.ask_json(FACT_PROMPT, f"{exchange(said, CLIP_CHARS)}\nAnswer:",
                                      schema, name="facts", max_tokens=400)
            return _beside(long, self._parse(data)), ""
        except (MalformedJSON, LLMError) as exc:
            for fact in long:
                fact.confidence = FALLBACK_CONFIDENCE
            kept = _beside(long, [RawFact(f.text, f.locations, FALLBACK_CONFIDENCE, f.said)
                                  for f in said_statements(turn.user)])  # lines as said
            return kept, f"fact extraction failed for turn {turn.index} ({exc}); " \
                         f"kept {len(kept)} developer sentences"

    def _parse(self, data: Any) -> list[RawFact]:
        items = data.get("facts", []) if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise MalformedJSON("'facts' is not a list")
        facts: list[RawFact] = []
        seen: set[str] = set()
        for item in items:
            text = item.get("text", "") if isinstance(item, dict) else item
            said = str(text).strip()
            text = without_questions(said)  # a question is not a fact
            key = fact_key(text)
            if not text or key in seen:
                continue
            seen.add(key)
            raw = item.get("locations", []) if isinstance(item, dict) else []
            locations = [str(x).strip().strip("`") for x in raw if str(x).strip()] \
                if isinstance(raw, list) else []
            facts.append(RawFact(text, locations, EXTRACTED_CONFIDENCE,
                                 said if said != text else ""))
        return facts

    def subject_of(self, text: str, locations: list[str]) -> tuple[str, list[str]]:
        """A fact's subject and its resolved locations. The subject is the first code-like
        name the fact mentions (resolved when the repository has it; for an object-first
        negation, the function it names last), else its first location."""
        resolved = [r[0] for r in (self.resolve(x) for x in locations) if r is not None]
        names = [n for n in exchange_names(text) if not n.endswith((".py", ".md", ".pyi"))]
        inside = negated_in(text)  # "Don't use `g` in `f`." is about f
        if inside and self.resolve(inside) is not None:
            names = [inside, *(n for n in names if n != inside)]
        subject = ""
        if names:
            hit = self.resolve(names[0])
            subject = hit[0] if hit is not None and subject_key(hit[0]) == subject_key(
                names[0]) else names[0]
            if hit is not None and hit[0] not in resolved:
                resolved.insert(0, hit[0])
        elif resolved:
            subject = resolved[0]
        else:  # a plain word that names a function or class of the repository
            for word in LONG_WORD.findall(text):
                if word in self.symbol_names():
                    hit = self.resolve(word)
                    if hit is not None:
                        subject, resolved = hit[0], [hit[0]]
                        break
        return subject, list(dict.fromkeys(resolved))

    def symbol_names(self) -> frozenset[str]:
        """Names of the repository's functions, methods and classes (read again after
        a refresh of the index found changes: an edit applied mid-session)."""
        repo = self.env.repo
        generation = getattr(repo, "generation", 0)
        if self._names is None or self._names_at != generation:
            self._names = frozenset(
                c.name for c in repo.chunks(("function", "method", "class"))
            ) if repo is not None else frozenset()
            self._names_at = generation
        return self._names

    def lexicon(self) -> Lexicon:
        """What a statement's names resolve against: the repository's symbols and files
        (read again after the index changed) and the subjects the conversation has."""
        repo = self.env.repo
        generation = getattr(repo, "generation", 0)
        if self._lexicon is None or self._lexicon[0] != generation:
            chunks = repo.chunks(("function", "method", "class", "module")) \
                if repo is not None else []
            defined: dict[str, str] = {}
            for c in chunks:
                if c.kind != "module":
                    defined.setdefault(c.name, c.path)
            files = tuple(dict.fromkeys(c.path for c in chunks))
            reader = self.reviser.reader
            sources = [reader.source(f) for f in files] if reader is not None else []
            modules = frozenset(sys.stdlib_module_names).union(
                *(imported_modules(source) for source in sources))
            imported = frozenset().union(*(imported_names(source) for source in sources))
            self._lexicon = (generation, Lexicon(frozenset(defined), files, defined,
                                                 modules=modules, words=whole_words(),
                                                 imported=imported))
        subjects = frozenset(subject_key(n.subject) for n in self.graph.of_type("fact")
                             if n.subject)
        return replace(self._lexicon[1], subjects=subjects)

    async def read(self, facts: list[RawFact]) -> list[Reading]:
        """What each fact is about (``reading``), whatever its phrasing."""
        if not facts:
            return []
        if [f.text for f in facts] == self._read[0]:  # read already (``extract``)
            return list(self._read[1])
        lexicon = self.lexicon()
        read = await asyncio.to_thread(self.reader.read_all, [f.text for f in facts], lexicon)
        again = [n for n, (f, r) in enumerate(zip(facts, read, strict=True))
                 if not r.subject and f.said]  # "Where does f go? In m.py." is about f
        if again:
            more = await asyncio.to_thread(self.reader.read_all,
                                           [facts[n].said for n in again], lexicon)
            for n, reading in zip(again, more, strict=True):
                read[n] = reading
                if reading.value and not _names(facts[n].text, reading.subject):
                    facts[n].text = facts[n].said  # "The m module." alone names no function
        self._read = ([f.text for f in facts], read)
        return read

    async def _read_again(self, nodes: list[Node]) -> None:
        """Earlier statements read again once their function is a subject: a bare name that
        is also a word ("I'd put sliced in m.py.", "first") reads as a plain word until a
        statement makes it a subject of the conversation (quoted, or said as code). A
        current statement the reading found no subject of (``subject_of`` may have given it
        one by a plain word) that says one of the new subjects is then read with it known
        and said as a name; when it then sets a value (a place, parameters, a dependency) it
        gets its subject, place and form, so that ``nodes`` (placed next) revise it by its
        slot as they revise any statement of that aspect (a description keeps what it had:
        the rules reading bodies took it as it was placed)."""
        # the subjects read so far (not one ``subject_of`` gave a statement by a plain word)
        known = frozenset(subject_key(n.subject) for n in self.graph.of_type("fact")
                          if n.subject and n.id not in self._unread)
        new = {subject_key(n.subject) for n in nodes
               if n.type == "fact" and n.subject and n.id not in self._unread}
        new -= known
        if not new:
            return
        said = [n for n in self.graph.of_type("fact") if n.current and n.id in self._unread
                and new & {w.lower().rstrip(".") for w in WORD_RUN.findall(n.content)}]
        if not said:
            return
        def quoted(text: str) -> str:  # the new subjects said as names ("put `first` in")
            def name(m: re.Match[str]) -> str:
                word = m.group(0).rstrip(".")
                return f"`{word}`{m.group(0)[len(word):]}" if word.lower() in new else m.group(0)
            return WORD_RUN.sub(name, text)

        lexicon = replace(self.lexicon(), subjects=known | new)
        read = await asyncio.to_thread(self.reader.read_all,
                                       [quoted(n.content) for n in said], lexicon)
        for node, reading in zip(said, read, strict=True):
            if subject_key(reading.subject) not in new:
                continue
            subject, where, form = self.placed(RawFact(node.content, [], node.confidence),
                                               reading)
            if not form:  # only a value statement: its slot, not its body, is compared
                continue
            node.subject, node.form = subject, form
            node.locations = where or node.locations
            self._unread.discard(node.id)

    def placed(self, fact: RawFact, reading: Reading) -> tuple[str, list[str], str]:
        """(subject, resolved locations, form) of a fact read as ``reading``."""
        if not reading.subject:
            subject, where = self.subject_of(fact.text, fact.locations)
            if not subject and fact.said:  # "What about `f`? It must ..." is about f
                subject, where = self.subject_of(fact.said, fact.locations)
            return subject, where, ""
        subject, where = self.subject_of(f"`{reading.subject}`", fact.locations)
        form = reading.form()
        if form and reading.aspect == "dependency" and negates_use(fact.text):
            form = f"`{reading.subject}` should not use `{reading.value}`."
        return subject, where, (form if form != fact.text.strip() else "")

    # -- one turn ---------------------------------------------------------------------
    async def add_turn(self, turn: Turn) -> TurnReport:
        report = TurnReport()
        self._read = ([], [])
        raw, report.skipped = await self.extract(turn)
        origin = self.env.count(f"{turn.user}\n{turn.assistant}")
        nodes: list[Node] = []
        for n, (fact, reading) in enumerate(zip(raw, await self.read(raw), strict=True)):
            subject, where, form = self.placed(fact, reading)
            nodes.append(Node(f"fact:{turn.index}:{n}", "fact", f"turn:{turn.index}",
                              fact.text, self.env.count(fact.text), fact.confidence,
                              subject, where, turn.index, origin, form=form))
            if not reading.subject:
                self._unread.add(nodes[-1].id)
        for n, block in enumerate(code_blocks(turn.assistant)):
            name = first_definition(block) or next(iter(exchange_names(turn.user)), "")
            hit = self.resolve(name) if name else None
            nodes.append(Node(f"code:{turn.index}:{n}", "code", f"turn:{turn.index}", block,
                              self.env.count(block), 1.0, name,
                              [hit[0]] if hit is not None else [], turn.index, origin))
        for side, text in (("user", turn.user), ("assistant", turn.assistant)):
            for n, failure in enumerate(failures(text)):
                function = failure.frames[-1][2] if failure.frames else ""
                if not function and failure.test:
                    function = failure.test.rsplit("::", 1)[-1]
                hit = self.resolve(function) if function else None
                content = failure.text()
                nodes.append(Node(f"fail:{turn.index}:{side}:{n}", "failure",
                                  f"turn:{turn.index}", content, self.env.count(content), 1.0,
                                  hit[0] if hit is not None else function,
                                  [hit[0]] if hit is not None else [], turn.index, origin))
        if not nodes:
            return report
        await self._read_again(nodes)
        cued = [n for n in nodes if n.type == "fact" and revision_cue(n.content)]
        quoted = [n for n in cued if claim(n.content) != n.content]
        # a statement's body: without its lead naming the subject and, when cued, without
        # its cue words ("Actually, `f` should: X" -> "X"), as the aspects and borrowed
        # descriptions are read from it
        def told(node: Node) -> str:  # what it says of its subject, the name masked
            return said_of(claim(node.content), node.subject) if node.subject \
                else body(claim(node.content))

        led = [n for n in nodes if n.type == "fact" and told(n) != n.content]
        vectors = await asyncio.to_thread(self.env.embedder.embed,
                                          [n.content for n in nodes]
                                          + [claim(n.content) for n in quoted]
                                          + [told(n) for n in led])
        own = dict(zip((n.id for n in nodes), vectors[:len(nodes)], strict=True))
        claims = {n.id: own[n.id] for n in cued}
        claims.update(zip((n.id for n in quoted),
                          vectors[len(nodes):len(nodes) + len(quoted)], strict=True))
        bodies = dict(zip((n.id for n in led), vectors[len(nodes) + len(quoted):],
                          strict=True))
        for node in nodes:
            await self._place(node, own[node.id], report, claims.get(node.id),
                              bodies.get(node.id))
        for a in nodes:  # the units of one turn belong to one task
            for b in nodes:
                if a.id < b.id:
                    self.graph.link(a.id, b.id, "task")
        return report

    async def _place(self, node: Node, vector: np.ndarray, report: TurnReport,
                     claim_vector: np.ndarray | None = None,
                     body_vector: np.ndarray | None = None) -> None:
        graph = self.graph
        place = self.reviser.home_of(graph, node.subject) if node.type == "fact" else ""
        revised = graph.revisions(node, vector, claim_vector, body_vector)
        if node.type == "fact":  # what it supersedes by what it says (no cue needed)
            revised += await self.reviser.supersedes(graph, node, vector, body_vector,
                                                     revised, self.judge)
        if claim_vector is not None:
            graph.claims[node.id] = np.asarray(claim_vector, dtype=np.float32)
        if body_vector is not None:
            graph.bodies[node.id] = np.asarray(body_vector, dtype=np.float32)
        similar = graph.similar_to(node, vector)
        graph.add(node, vector)
        report.added.append(node)
        for old, sim in revised:
            graph.supersede(node, old, sim)
            report.superseded.append((node, old))
        if node.type == "fact" and self.reviser.home_of(graph, node.subject) != place:
            again = await rehome(self.reviser, graph, node.subject, self.judge)
            report.restored += again.restored
            report.superseded += [(new, old) for new, old, _ in again.superseded]
        for location in node.locations:
            symbol = self.symbol(location)
            if symbol is not None:
                graph.link(node.id, symbol.id, "contains")
        for other, sim in similar:
            if other.current and other.id != node.id:
                graph.link(node.id, other.id, "similar", sim)
        if node.type == "fact":
            own = subject_key(node.subject)
            for name in exchange_names(node.content):
                if subject_key(name) == own:
                    continue
                for fact in graph.about(name):
                    if fact.id != node.id:
                        graph.link(node.id, fact.id, "precondition")


def _names(text: str, subject: str) -> bool:
    """Whether ``text`` says ``subject``'s name (its last part), however said
    (``function_said``, as ``said_of`` finds it)."""
    return function_said(subject.split("::")[-1].rsplit(".", 1)[-1]).search(text) is not None
