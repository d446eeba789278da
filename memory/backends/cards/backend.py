"""``cards``: decision-aware memory cards over a context graph (CICL, for a coding chat).

``observe`` grows an instance context graph (``graph``, built by
``build``): the developer's facts with their subjects and repository
locations, the symbols and files they are about, the code the assistant wrote, the
failures seen in the chat and the test runs among a turn's tool calls (``outcomes``: a
later run revises the failures it makes out of date), joined by containment,
similarity, conflict (revisions: the earlier unit is superseded and never shown
again), precondition and task edges.

``context`` gathers candidates (lexical overlap, vector similarity, every current
fact about a function the query names, the top repository functions for the query,
then one-hop neighbours of the best of them),
scores each by CICL's decision utility (``score``: the ``proxy`` scorer by
default, the ``llm`` judge as an option) and packs them as audited memory cards
under the budget (``pack``: ``post``- or ``pre``-selection compression).

Options (``BackendEnv.options``): ``cards_scorer`` (proxy | llm), ``cards_packing``
(post | pre), ``cards_max`` (cards per query, 12), ``cards_facts`` (read | llm | said:
a statement the reading places is kept as said and the model picks facts among the
others, or the model picks them in every message, or every statement is kept as said
without a call). Units
tied to a symbol go stale when a commit or the working tree changes that symbol
(``stale``): their card says so and their negative-transfer risk rises. The graph
lives in process and is rebuilt from the transcript on a switch or resume. This
backend does its own repository retrieval, so it gets no generic top-10 functions.
Earlier sessions of the repository reach it as summary nodes (``experience``):
retrieved like any unit, or pinned with ``pin_experience`` (``/experience``);
``remember`` (``/remember``, the end of a headless chat) keeps this session's.
With ``shared_memory`` the graph is joined to the repository's kept facts (``shared``,
``kept``): every session's facts, and what the MCP server remembers (``note``), reach every
later session and the server; pins and forgets (``memory_items``, ``forget``) travel too.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import numpy as np

from memory.backends._journal import Journal
from memory.backends._topics import terms
from memory.backends.base import BackendEnv, Digest
from memory.backends.cards import alarm as alarms
from memory.backends.cards.build import GraphBuilder, TurnReport
from memory.backends.cards.card import Unit, compile_card
from memory.backends.cards.experience import (
    Experience,
    ExperienceStore,
    session_facts,
    summarise,
)
from memory.backends.cards.graph import ContextGraph, Node
from memory.backends.cards.kept import FORGOTTEN, KeptStore
from memory.backends.cards.outcomes import TestOutcomes
from memory.backends.cards.pack import PACKINGS, Packed, pack
from memory.backends.cards.rules import (
    ALARM_BOOST,
)
from memory.backends.cards.score import (
    Candidate,
    LLMScorer,
    ProxyScorer,
    Scorer,
    named_in,
    query_words,
    utility,
)
from memory.backends.cards.shared import SharedFacts, located
from memory.backends.cards.stale import StalenessWatch
from memory.index.embed import cosine
from memory.turn.steering import MemoryItem
from memory.types import ContextPack, Section, Turn

SCORERS = ("proxy", "llm")
SEARCH_K = 16  # candidates by vector similarity, and as many by lexical overlap
EXPAND_FROM = 6  # the best candidates whose neighbours join the candidates
MAX_CARDS = 12
SHOWN = {"SUPERSEDE": "DELETE", "RESTORE": "UPDATE"}  # graph events as the memory view marks them


def _option(env: BackendEnv, key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = str(env.options.get(key, default))
    if value not in allowed:
        raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {value!r}")
    return value


class CardsBackend:
    name = "cards"

    def __init__(self, env: BackendEnv) -> None:
        self.env = env
        self.graph = ContextGraph()
        self.builder = GraphBuilder(env, self.graph)
        self.tests = TestOutcomes(self.graph, self.builder.resolve, self.builder.symbol,
                                  env.count)
        self.packing = _option(env, "cards_packing", "post", PACKINGS)
        scorer = _option(env, "cards_scorer", "proxy", SCORERS)
        self.scorer: Scorer = (LLMScorer(self.graph, env.llm) if scorer == "llm"
                               else ProxyScorer(self.graph))
        self.max_cards = int(env.options.get("cards_max", MAX_CARDS))  # type: ignore[call-overload]
        self.journal = Journal(self.name)
        self.last_events: list[tuple[str, str]] = []
        self.last_pack: Packed | None = None  # the cards of the last context (for people)
        self.watch = StalenessWatch(env.repo.root) if env.repo is not None else None
        self._digest = Digest()
        self.store = ExperienceStore(env.data_dir) if env.data_dir is not None else None
        self.experiences: list[Experience] = []  # earlier sessions of this repository
        self.pinned: set[str] = set()  # summary nodes shown in every context (oracle reuse)
        if self.store is not None:
            for exp in self.store.load():
                if exp.session != env.session_id:
                    self._add_experience(exp)
        self.shared = SharedFacts(KeptStore(env.data_dir, env.embedder.dim), self.graph,
                                  self.watch, env.session_id or "", env.count,
                                  pinned=self.pinned) \
            if env.options.get("shared_memory") and env.data_dir is not None else None
        if self.shared is not None:
            self.shared.sync(force=True)

    # -- experience across sessions --------------------------------------------------------
    def _add_experience(self, exp: Experience) -> Node:
        self.experiences = [e for e in self.experiences if e.session != exp.session] + [exp]
        text = exp.text()
        return self.graph.add(Node(exp.node_id, "summary", f"session:{exp.session}", text,
                                   self.env.count(text), 0.8))

    async def remember(self) -> Experience | None:
        """Summarise what this session decided and did (at most 200 words) and keep it for
        the repository's later sessions; None when the session left nothing to keep."""
        facts = session_facts(self.graph)
        if not facts or self.store is None:
            return None
        exp, why = await summarise(self.env.llm, self.env.session_id or "session", facts)
        if why:
            self.journal.skip(why)
        await asyncio.to_thread(self.store.save, exp)
        self.journal.op("REMEMBER", exp.node_id, exp.text()[:300])
        return exp

    def pin_experience(self, session: str = "") -> Experience:
        """Show an earlier session's summary in every context from now on (the latest when
        ``session`` is empty; else the one whose id starts with it)."""
        if not self.experiences:
            raise LookupError("no earlier session of this repository left a summary "
                              "(/remember keeps one)")
        found = [e for e in self.experiences if e.session.startswith(session)]
        if not found:
            known = ", ".join(e.session for e in self.experiences[-5:])
            raise LookupError(f"no session summary {session!r}; known: {known}")
        exp = found[-1]
        self.pinned.add(exp.node_id)
        self._digest.update("pin", exp.node_id)
        return exp

    # -- observe --------------------------------------------------------------------------
    async def observe(self, turn: Turn) -> None:
        before = set(self.graph.edges)  # not a position: a taken-back edge leaves the list
        if self.shared is not None:  # what other sessions and the server kept meanwhile
            await asyncio.to_thread(self.shared.sync)
        stale = await asyncio.to_thread(self.watch.check, self.graph) if self.watch else []
        for node in stale:
            self.journal.op("STALE", node.id, node.stale)
        valid = self.watch.revalidated if self.watch else []
        for node in valid:
            self.journal.op("VALID", node.id, "its code is back to what it was (undone)")
        report = await self.builder.add_turn(turn)
        tested = self.tests.add_turn(turn)  # test runs among the turn's tool calls
        for node in tested.added:  # the units of one turn belong to one task
            for other in report.added:
                self.graph.link(*sorted((node.id, other.id)), "task")
        report.added += tested.added
        report.superseded += tested.superseded
        for node in report.added:
            if node.type != "code":
                continue
            raised, cleared = alarms.update(self.graph, node)
            for alarm in raised:
                self.journal.op("ALARM", alarm.fact.id, alarm.why)
            for fact in cleared:
                self.journal.op("CLEAR", fact.id, f"code at turn {turn.index} respects it")
            self._digest.update("alarm", *(f"{a.fact.id}:{a.why}" for a in raised),
                                *(f.id for f in cleared))
        if self.watch is not None:
            for node in report.added:
                await asyncio.to_thread(self.watch.anchor, node)
        if self.shared is not None:
            await asyncio.to_thread(self._share, report, "chat")
        await self._embed_missing()
        if report.skipped:
            self.journal.skip(report.skipped)
        events: list[tuple[str, str]] = []
        for node in report.added:
            events.append(("ADD", node.id))
            self.journal.op("ADD", node.id, f"{node.type}: {node.content[:200]}"
                            + (f" [{node.subject}]" if node.subject else ""))
        for node in report.restored:
            events.append(("RESTORE", node.id))
            self.journal.op("RESTORE", node.id, f"{node.content[:200]} (the place said for "
                                                "its function changed: current again)")
        for new, old in report.superseded:
            events.append(("SUPERSEDE", old.id))
            self.journal.op("SUPERSEDE", old.id, f"{old.content[:200]} -> revised by {new.id}")
        links = [f"{e.src} -{e.kind}-> {e.dst}" for e in self.graph.edges if e not in before]
        if links:
            self.journal.op("LINK", f"turn:{turn.index}", "; ".join(links))
        self.last_events = events
        self._digest.update(turn.index, *(f"{n.id}\0{n.content}\0{n.subject}"
                                          for n in report.added),
                            *(f"{new.id}>{old.id}" for new, old in report.superseded),
                            *(f"restore:{n.id}" for n in report.restored),
                            *(f"stale:{n.id}:{n.stale}" for n in stale),
                            *(f"valid:{n.id}" for n in valid), len(self.graph.edges))

    async def observe_many(self, turns: list[Turn]) -> None:
        for turn in turns:
            await self.observe(turn)

    async def _embed_missing(self) -> None:
        missing = [n for n in self.graph.nodes.values() if n.id not in self.graph.vectors]
        if not missing:
            return
        vectors = await asyncio.to_thread(self.env.embedder.embed,
                                          [n.content[:2000] for n in missing])
        for node, vector in zip(missing, vectors, strict=True):
            self.graph.vectors[node.id] = np.asarray(vector, dtype=np.float32)

    def drain_records(self) -> list[dict[str, Any]]:
        return self.journal.drain()

    # -- kept facts (shared_memory) and steering -----------------------------------------
    def _share(self, report: TurnReport, source: str) -> None:
        assert self.shared is not None
        for node in report.added:
            if node.type == "fact" and node.id in self.graph.vectors:
                self.shared.keep(node, self.graph.vectors[node.id], source)
        for new, old in report.superseded:
            self.shared.superseded(new, old)
        for node in report.restored:
            self.shared.restored(node)

    def warm(self) -> None:
        """Load now what the first statement kept outside a turn (``note``) needs: the
        tokenizer that counts it (the embedded model's, when that is the model) and the
        prototype vectors the reading and the revision rules compare it with."""
        self.env.count("warm")
        vector = np.asarray(self.env.embedder.embed(["warm"])[0], dtype=np.float32)
        self.builder.reader.prototypes()
        reviser = self.builder.reviser
        reviser.aspect(vector)
        reviser.describes(vector)
        reviser.claims(vector)

    async def note(self, text: str, about: str = "", source: str = "mcp") -> Node:
        """Keep a fact stated outside a turn (the MCP server's ``remember``): placed on the
        code ``about`` names (a path, ``path::qualname`` or a name), else on what the text
        names; it revises what it contradicts as a statement in a chat does, and is anchored
        to its code. ValueError when ``about`` is outside the repository or names nothing."""
        if self.shared is not None:
            await asyncio.to_thread(self.shared.sync)
        where = [await asyncio.to_thread(located, self.env.repo, about)] if about else []
        subject, locations = await asyncio.to_thread(self.builder.subject_of, text, where)
        if where:
            subject, locations = where[0], list(dict.fromkeys([*where, *locations]))
        node = Node(f"mem:{uuid.uuid4().hex[:12]}", "fact", f"memory:{self.env.session_id}",
                    text, self.env.count(text), 1.0, subject, locations)
        vector = (await asyncio.to_thread(self.env.embedder.embed, [text]))[0]
        report = TurnReport()
        await self.builder._place(node, np.asarray(vector, dtype=np.float32), report)
        if self.watch is not None:
            await asyncio.to_thread(self.watch.anchor, node)
        if self.shared is not None:
            await asyncio.to_thread(self._share, report, source)
        self._digest.update("note", node.id, text)
        return node

    def memory_items(self) -> list[MemoryItem]:
        """The current facts (the session's and, with ``shared_memory``, the kept ones)."""
        return [MemoryItem(n.id, n.content, editable=False) for n in self.graph.current()
                if n.type == "fact"]

    async def forget(self, memory_id: str) -> str:
        """Take a current fact out of every later context (and out of the kept facts)."""
        node = self.graph.nodes.get(memory_id)
        if node is None or node.type != "fact" or not node.current:
            raise KeyError(memory_id)
        if self.shared is not None:
            await asyncio.to_thread(self.shared.forget, node)
        node.superseded_by = FORGOTTEN
        self.pinned.discard(memory_id)
        self._digest.update("forget", memory_id)
        return node.content

    # -- candidates -----------------------------------------------------------------------
    def _lexical(self, query: str, node: Node) -> float:
        wanted = {t.lower() for t in terms(query)}
        if not wanted:
            return 0.0
        have = {t.lower() for t in terms(f"{node.content} {node.subject}")}
        return len(wanted & have) / len(wanted)

    async def candidates(self, query: str) -> list[Candidate]:
        """Lexical, vector and repository candidates, every current fact about a function
        the query names, then one-hop neighbours; current units only (no state changes)."""
        vector = (await asyncio.to_thread(self.env.embedder.embed, [query]))[0]
        current = [n for n in self.graph.current() if n.id in self.graph.vectors]
        found: dict[str, Candidate] = {}
        if current:
            sims = cosine(vector, np.stack([self.graph.vectors[n.id] for n in current]))
            lexical = [self._lexical(query, n) for n in current]
            by_vector = np.argsort(-sims)[:SEARCH_K]
            by_text = [i for i in np.argsort(-np.asarray(lexical))[:SEARCH_K] if lexical[i] > 0]
            for i in [*by_vector, *by_text]:
                node = current[int(i)]
                found[node.id] = Candidate(node, float(sims[int(i)]), lexical[int(i)])
        words = query_words(query)
        for node in current:  # every current fact about a function the query names
            if node.id not in found and node.type == "fact" and node.subject \
                    and named_in(node.subject, query, words):
                sim = float(cosine(vector, self.graph.vectors[node.id][None, :])[0])
                found[node.id] = Candidate(node, sim, self._lexical(query, node), "subject")
        for candidate in await self._repo_candidates(query, vector):
            found.setdefault(candidate.node.id, candidate)
        seeds = sorted(found.values(), key=lambda c: -(c.similarity + c.lexical))[:EXPAND_FROM]
        for seed in seeds:
            for node in self.graph.neighbours(seed.node.id):
                if node.id in found or node.id not in self.graph.vectors:
                    continue
                sim = float(cosine(vector, self.graph.vectors[node.id][None, :])[0])
                found[node.id] = Candidate(node, sim, self._lexical(query, node), "neighbour")
        return [c for c in found.values() if c.node.current]

    async def _repo_candidates(self, query: str, vector: np.ndarray) -> list[Candidate]:
        repo = self.env.repo
        if repo is None or self.env.repo_k <= 0:
            return []
        hits = await asyncio.to_thread(repo.functions, query, self.env.repo_k)
        fresh = [h.chunk for h in hits if f"sym:{h.chunk.location}" not in self.graph.nodes]
        keys = await asyncio.to_thread(self.env.embedder.embed, [c.key for c in fresh]) \
            if fresh else []
        out: list[Candidate] = []
        rank = {h.chunk.location: i for i, h in enumerate(hits)}
        for chunk, key_vector in zip(fresh, keys, strict=True):
            node = Node(f"sym:{chunk.location}", "symbol", "repo", chunk.code,
                        self.env.count(chunk.code), subject=chunk.location,
                        locations=[chunk.location])
            sim = float(cosine(vector, np.asarray(key_vector)[None, :])[0])
            out.append(Candidate(node, sim, self._lexical(query, node), "repo",
                                 rank[chunk.location]))
        for hit in hits:  # symbols already in the graph keep their node and edges
            node = self.graph.nodes.get(f"sym:{hit.chunk.location}")
            if node is not None and node.id in self.graph.vectors:
                sim = float(cosine(vector, self.graph.vectors[node.id][None, :])[0])
                out.append(Candidate(node, sim, self._lexical(query, node), "repo",
                                     rank[hit.chunk.location]))
        return out

    # -- context --------------------------------------------------------------------------
    async def units(self, query: str) -> list[Unit]:
        """Every current candidate with its judgment, utility and card; a pinned session
        summary and a fact the latest code breaks are always candidates, and first."""
        await self._embed_missing()
        candidates = await self.candidates(query)
        have = {c.node.id for c in candidates}
        candidates += [Candidate(self.graph.nodes[i], 1.0, 1.0, "pinned")
                       for i in sorted(self.pinned) if i not in have]
        candidates += [Candidate(n, 1.0, 1.0, "alarm") for n in self.graph.current()
                       if n.alarm and n.id not in have]
        judgments = await self.scorer.judge(query, candidates)
        units = []
        for c, j in zip(candidates, judgments, strict=True):
            score = utility(j, c.node.tokens) + (1.0 if c.node.id in self.pinned else 0.0) \
                + (ALARM_BOOST if c.node.alarm else 0.0)  # raised first
            card = compile_card(c.node, j, score, self.graph.revised(c.node.id))
            units.append(Unit(c.node, j, score, card))
        return units

    async def context(self, query: str, *, budget: int) -> ContextPack:
        units = await self.units(query)
        budget = max(0, budget)
        packed = pack(units, budget,
                      self.env.count, mode=self.packing, max_units=self.max_cards)
        self.last_pack = packed
        sections = []
        for card in packed.cards:
            node = self.graph.nodes.get(card.node_id)
            kind = "repo" if card.kind in ("symbol", "file") else "memory"
            source = node.subject if kind == "repo" and node is not None else card.node_id
            if kind == "repo" and node is None:
                source = card.scope
            sections.append(Section(kind, source, card.render(), card.tokens))
        return ContextPack(query, sections, self.env.count(query))

    # -- for people ---------------------------------------------------------------------
    def settings(self) -> dict[str, object]:
        """How this backend ran, for replay results: which scorer and packing (CICL's
        modes are reported apart), the card limit, how facts were taken (``cards_facts``),
        the LLM judge's fallbacks, and whether
        a model confirmed revisions (with what it answered, failures counted)."""
        judge = self.builder.judge
        return {"scorer": self.scorer.name, "packing": self.packing,
                "max_cards": self.max_cards, "facts": self.builder.facts,
                "judge_fallbacks": getattr(self.scorer, "fallbacks", 0),
                "revision_judge": "llm" if judge is not None else "off",
                **({"revision_judge_" + k: v for k, v in vars(judge.stats).items()}
                   if judge is not None else {})}

    def memory_view(self) -> list[tuple[str, str]]:
        last = {what: op for op, what in self.last_events}
        rows = []
        for node in self.graph.nodes.values():
            state = "" if node.current else f" (superseded by {node.superseded_by})"
            about = f" [{node.subject}]" if node.subject else ""
            rows.append((f"{node.type}  {node.id}{about}: {node.content[:160]}{state}",
                         SHOWN.get(last.get(node.id, ""), last.get(node.id, ""))))
        return rows

    def state_digest(self) -> str:
        return self._digest.value
