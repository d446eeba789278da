"""The revision rules of ``cards`` measured without a reader (not collected by pytest; run
it by hand): each outline's conversation said by the template mock user in one voice, the
developer's lines only (``cards_facts=said``, the answers "Noted."), into a fresh ``cards``
over the outline's repository without its targets; then, per sample, whether each true
item and each stale one is still a current fact of the graph, and which rule superseded
the ones that are not. A rule change is measured on every set and voice in a few CPU
minutes, before the bench (tests/bench_replay.py) measures what the packs show.

    .venv/bin/python -m tests.bench_cards_graph --dir OUTLINES --repo REPO [--min-l 50]
        [--voice template --voice varied --voice FILE ...] [--seed 0] [--save OUT.json]
    .venv/bin/python -m tests.bench_cards_graph --set NAME [--voice ...]
        [--facts said|read]

``--facts read`` reads the developer's lines as the bench's ``cards`` does (its default:
lines the reading places kept as said, the others to the extractor, here a model that
answers nothing, so kept as said at a lower confidence); ``said`` (the default here, as
the tables were measured) keeps every line as said.

``--set NAME`` is a stored set of ``replay/locoeval/sets`` (webcolors, rfc3986,
more-itertools): its outlines with l >= 50 over its rebuilt repository, as the bench
measures them; ``--voice writer-b`` is then its ``phrasings/writer-b.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import tempfile
from pathlib import Path
from typing import Any

from memory.backends import BackendEnv, registry
from memory.backends.cards import graph as graph_module
from memory.backends.cards import revise as revise_module
from memory.index.embed import get_embedder
from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from memory.types import Turn
from replay.locoeval import DEMO
from replay.locoeval.benchmark import LoCoEvalBenchmark
from replay.locoeval.mockuser import TemplateUser
from replay.locoeval.outline import Outline, load_outlines
from replay.locoeval.prepare import prepared_copy
from replay.locoeval.voice import check_voice, voiced

SETS = DEMO.parent / "sets"


class Trace:
    """The supersessions of one conversation, with the rule that made each."""

    def __init__(self) -> None:
        self.rules: dict[tuple[str, str], str] = {}
        self.made: list[dict[str, Any]] = []
        graph, reviser = graph_module.ContextGraph, revise_module.Reviser
        supersede, revisions, revised = graph.supersede, graph.revisions, reviser.revisions
        trace = self

        def by_rules(self: Any, node: Any, *args: Any, **kwargs: Any) -> Any:
            found = revised(self, node, *args, **kwargs)
            for r in found:
                trace.rules[(node.id, r.old.id)] = r.rule
            return found

        def by_graph(self: Any, node: Any, *args: Any, **kwargs: Any) -> Any:
            found = revisions(self, node, *args, **kwargs)
            for old, _ in found:
                same = graph_module.slot(node.statement) == graph_module.slot(old.statement)
                trace.rules[(node.id, old.id)] = "graph:" + ("slot" if same else "near/cue")
            return found

        def supersedes(self: Any, new: Any, old: Any, similarity: float) -> Any:
            trace.made.append({"new": new.content, "old": old.content,
                               "similarity": round(similarity, 3),
                               "rule": trace.rules.get((new.id, old.id), "?")})
            return supersede(self, new, old, similarity)

        reviser.revisions, graph.revisions, graph.supersede = by_rules, by_graph, supersedes


async def measure(outlines: list[Outline], repo: Path, voice: Any, work: Path,
                  indexes: dict[str, RepoIndex], trace: Trace,
                  mode: str = "said") -> list[dict[str, Any]]:
    embedder = get_embedder()
    rows: list[dict[str, Any]] = []
    bench = LoCoEvalBenchmark()
    for outline in outlines:
        said = voiced(outline, voice)
        if outline.id not in indexes:
            copy = work / outline.id / "repo"
            prepared_copy(repo, bench.targets(outline), copy)
            indexes[outline.id] = RepoIndex(copy, Store(work / outline.id / "index.lance"),
                                            embedder)
            indexes[outline.id].refresh()
        env = BackendEnv(llm=LLM(LLMConfig(model="scripted/none")), embedder=embedder,
                         repo=indexes[outline.id],
                         data_dir=work / outline.id / f"{voice.kind}-{mode}",
                         session_id=voice.kind, options={"cards_facts": mode})
        cards = registry.create("cards", env)
        trace.made.clear()
        for n, (_, text) in enumerate(TemplateUser(said, 0, 0.0).conversation()):
            await cards.observe(Turn(n, text, "Noted."))
        facts = cards.graph.of_type("fact")
        current = [f.content for f in facts if f.current]
        every = [f.content for f in facts]
        by_old = {m["old"].strip(): m for m in trace.made}
        for sample in said.samples:
            for item in sample.items:
                text = item.text.strip()
                kept = any(text in c or c in text for c in current)
                heard = any(text in c or c in text for c in every)
                rows.append({"outline": outline.id, "sample": sample.id,
                             "function": sample.function, "type": item.type,
                             "truth": item.truth, "text": text,
                             "state": "kept" if kept else "superseded" if heard else "not read",
                             "by": None if kept else by_old.get(text)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=DEMO / "outlines")
    parser.add_argument("--repo", type=Path, default=DEMO / "inventory")
    parser.add_argument("--min-l", type=int, default=None, help="default 0 (50 with --set)")
    parser.add_argument("--set", default=None, choices=sorted(
        p.name for p in SETS.glob("*") if (p / "outlines").is_dir()),
        help="a stored set: its outlines, its repository, l >= 50")
    parser.add_argument("--voice", action="append", default=None,
                        help="template | varied | a phrasing file (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--facts", choices=("said", "read"), default="said",
                        help="cards_facts: every line as said, or read as the bench does")
    args = parser.parse_args()
    folder = SETS / args.set if args.set else None
    if folder is not None:
        args.dir, args.repo = folder / "outlines", folder / args.set
        args.min_l = 50 if args.min_l is None else args.min_l
    every = load_outlines(args.dir)
    outlines = [o for o in every if len(o.queries()) >= (args.min_l or 0)]
    trace, indexes, saved = Trace(), {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.voice or ["template"]:
            if folder is not None and (folder / "phrasings" / f"{spec}.json").is_file():
                spec = str(folder / "phrasings" / f"{spec}.json")
            voice = check_voice(spec, every, args.seed)
            rows = asyncio.run(measure(outlines, args.repo, voice, Path(tmp), indexes, trace,
                                       args.facts))
            count = collections.Counter((r["truth"], r["state"]) for r in rows)
            true, stale = (sum(v for (t, _), v in count.items() if t is want)
                           for want in (True, False))
            print(f"{args.dir.name} {spec}: true items current {count[(True, 'kept')]}/{true}, "
                  f"stale items current {count[(False, 'kept')]}/{stale}; "
                  f"true superseded {count[(True, 'superseded')]}, "
                  f"not read {count[(True, 'not read')]}")
            saved[spec] = rows
    if args.save is not None:
        args.save.write_text(json.dumps(saved, indent=1))


if __name__ == "__main__":
    main()
