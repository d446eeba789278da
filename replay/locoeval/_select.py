"""Sample selection (LoCoEval 3.1.1) and the whole ``engram replay build`` run.

A sample solvable from the repository alone is not a sample. For each target, on a
prepared copy without it (and without its tests), the target's signature is the query
for the top-10 repository functions (``RepoIndex.functions``); the reader-free check
then looks for each true item in that context: its text (or, for a stated requirement,
its sentence) verbatim, or a retrieved line or docstring sentence whose MiniLM cosine
with it reaches ``threshold``. A target with at least ``drop_recall`` of its true items
present is dropped; with a model, so is one whose generation from that context alone
passes its tests (graded like replay's generation task, on the original repository).
Before all that, a target whose tests do not pass on the original repository, in the
sandbox that grades generations, is dropped: no answer could ever pass them (a test
dependency missing, a test that needs the network); and so is one whose original
function, taken through an answer (written in one Python block as the scripted readers
write it, taken out as grading takes it, graded as a run grades it), does not pass them:
``oracle`` could not reach pass@1 1.0 there, and the sample would grade the extraction,
not the memory (a docstring whose fenced examples the extraction cannot keep, a function
the grading cannot put back).
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.listing import listed
from replay.locoeval._analyse import BuildError, RepoFacts, Target, analyse, repo_facts
from replay.locoeval._distract import REAL_TYPES, RewriteStats, Unit, llm_rewrites
from replay.locoeval.build import build_outlines, true_units
from replay.locoeval.matcher import flat
from replay.locoeval.outline import BUILD_REPORT as REPORT

if TYPE_CHECKING:
    from memory.index.embed import Embedder
    from memory.llm.client import LLM

THRESHOLD = 0.8  # cosine of an item with a retrieved line for "already in the context"
DROP_RECALL = 0.5  # share of true items present that makes a target solvable
TOP_K = 10
_RAISED = re.compile(r"[\w.]*(?:Error|Exception|Exit)\b:")  # "ModuleNotFoundError: ..."
TEXT_TYPES = ("core_functionality", "logical_constraint")
GENERATE = ("Write the Python function with the signature below, using what the repository "
            "code shown provides. Reply with one Python code block.")
CORE = ("Say in one or two plain sentences what the function does, including the rules it "
        "enforces. No code.")


@dataclass
class Verdict:
    location: str
    kept: bool
    reason: str
    recall: float
    found: list[str] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)
    generated: bool | None = None
    through_answer: bool | None = None  # the original, taken through an answer, passes


def segments(code: str) -> list[str]:
    """Lines of retrieved code and the sentences of its docstrings and comments."""
    out = []
    for line in code.splitlines():
        line = line.strip().strip("\"'#").strip()
        if len(line) >= 8:
            out += [s for s in re.split(r"(?<=[.;])\s+", line) if len(s) >= 8]
    return list(dict.fromkeys(out))


def present_items(units: list[Unit], context: list[str], embedder: Embedder,
                  threshold: float = THRESHOLD) -> list[Unit]:
    """The units whose true item the retrieved ``context`` (chunk codes) already holds."""
    from memory.index.embed import cosine

    text = flat("\n".join(context))
    parts = [s for code in context for s in segments(code)]
    matrix = embedder.embed(parts) if parts else None
    found = []
    for unit in units:
        probes = [unit.text] + ([unit.subject] if unit.type in TEXT_TYPES else [])
        if flat(unit.text) in text or (unit.type in TEXT_TYPES and len(unit.subject.split())
                                        >= 4 and flat(unit.subject) in text):
            found.append(unit)
            continue
        if matrix is None:
            continue
        best = max(float(cosine(v, matrix).max()) for v in embedder.embed(probes))
        if best >= threshold:
            found.append(unit)
    return found


def check_target(repo: Path, target: Target, signature: str, units: list[Unit],
                 embedder: Embedder, work: Path, threshold: float = THRESHOLD,
                 drop_recall: float = DROP_RECALL) -> tuple[Verdict, list[str]]:
    """The reader-free check on a copy of ``repo`` without ``target``; also the context."""
    from memory.index.repo import RepoIndex
    from memory.store import Store
    from replay.locoeval.prepare import prepared_copy

    name = re.sub(r"[^\w.-]+", "_", target.location)
    copy = prepared_copy(repo, [(target.path, target.qualname, target.tests)], work / name)
    index = RepoIndex(copy, Store(work / f"{name}.lance"), embedder)
    index.refresh()
    hits = index.functions(signature, TOP_K)
    context = [h.chunk.code for h in hits]
    found = present_items(units, context, embedder, threshold)
    recall = len(found) / len(units) if units else 0.0
    kept = recall < drop_recall
    reason = (f"reader-free: {len(found)}/{len(units)} true items already in the top-{TOP_K} "
              f"context" + ("" if kept else f" (>= {drop_recall:.0%}): solvable from the "
                            "repository alone"))
    return Verdict(target.location, kept, reason, round(recall, 3),
                   [u.text for u in found], [h.chunk.location for h in hits]), context


def failing_tests(repo: Path, targets: list[Target]) -> dict[str, str]:
    """The targets whose tests do not pass on the original ``repo`` (one sandbox run, each
    test in a pytest process of its own), by location, with why: the tests that did not
    pass (a skipped or xfail test reports no pass either) and the first exception pytest
    printed, when it printed one."""
    from replay.sandbox.sandbox import Limits, Sandbox

    tests = list(dict.fromkeys(t for target in targets for t in target.tests))
    if not tests:
        return {}
    with Sandbox(repo, limits=Limits()) as box:  # 60 s a test
        result = box.pytest(*tests)
    errors = [line[1:].strip() for line in result.stdout.splitlines()
              if line.startswith("E ") and _RAISED.match(line[1:].strip())]
    first = f"the run's first exception: {errors[0][:200]}" if errors else ""
    if not result.passed or result.forged:
        raise BuildError("none of the targets' tests pass on the original repository in "
                         f"the sandbox{f' ({first})' if first else ''}: is a test "
                         "dependency missing?")
    out: dict[str, str] = {}
    for target in targets:
        unpassed = [t for t in target.tests if not result.passed_all([t])]
        if unpassed:
            out[target.location] = (
                f"its tests do not pass on the original repository: {listed(unpassed)} "
                "(failed, or skipped or xfail, which could grade no generated function "
                f"either){f'; {first}' if first else ''}")
    return out


def through_answer(repo: Path, target: Target, limits: Any = None) -> str | None:
    """Why ``target``'s original function, written in an answer as the scripted readers
    write it (``answer_with``), taken out as grading takes it (``extract_target``) and put
    back as a run puts it (``insert_function``), cannot be graded; None when it passes
    its tests. It is graded in the sandbox as a run grades it (``run_code``: each test
    beside the run's check test), also when the file is put back byte for byte: the
    original repository's run (``failing_tests``) had one check test for all targets, not
    one from this target's tests (a check test built wrong for one file then shows here)."""
    from replay.locoeval.outline import Sample
    from replay.locoeval.prepare import PrepareError, find_function, insert_function
    from replay.locoeval.tasks import answer_with, extract_target, run_code
    from replay.sandbox.sandbox import Limits

    source = (repo / target.path).read_text("utf-8")
    span = find_function(source, target.qualname)
    original = "\n".join(source.splitlines()[span.start:span.end + 1])
    code = extract_target(answer_with(original), target.qualname)
    if code is None:
        return (f"no function `{target.qualname}` can be taken out of an answer holding its "
                "original code")
    try:
        put_back = insert_function(source, target.qualname, code)
    except PrepareError as exc:
        return f"the original function taken through an answer cannot be put back: {exc}"
    sample = Sample("s", target.namespace, target.path, "", target.tests, ())
    if run_code(repo, sample, code, limits or Limits()):
        return None
    if put_back == source:
        return ("the original function, put back byte for byte, fails its verdict in the "
                "sandbox: the grading, not the code (its check test or its run)")
    before, after = source.splitlines(), put_back.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
                min(len(before), len(after)))
    was, now = (x[line][:60] if line < len(x) else "(none)" for x in (before, after))
    return ("the original function taken through an answer fails its tests: put back, "
            f"line {line + 1} of {target.path} reads {now!r} for {was!r}")


async def _generation_passes(llm: LLM, repo: Path, target: Target, signature: str,
                             context: list[str], limits: Any) -> bool:
    from replay.locoeval.outline import Sample
    from replay.locoeval.tasks import run_generated

    prompt = "\n\n".join(context) + f"\n\nSignature: {signature}\nFile: {target.path}"
    answer = await llm.complete([{"role": "system", "content": GENERATE},
                                 {"role": "user", "content": prompt}],
                                purpose="build", temperature=0.0, max_tokens=600)
    sample = Sample("s", target.namespace, target.path, signature, target.tests, ())
    return await asyncio.to_thread(run_generated, repo, sample, answer, limits)


async def _describe(llm: LLM, repo: Path, target: Target) -> str | None:
    from replay.locoeval.prepare import find_function

    source = (repo / target.path).read_text("utf-8")
    span = find_function(source, target.qualname)
    code = "\n".join(source.splitlines()[span.start:span.end + 1])
    text = await llm.complete([{"role": "system", "content": CORE},
                               {"role": "user", "content": code}], purpose="build",
                              temperature=0.0, max_tokens=120)
    return " ".join(text.split()) or None


@dataclass
class BuildRun:
    """Everything one ``engram replay build`` does, and what it reports."""

    repo: Path
    targets: list[Target]
    out: Path
    seed: int = 0
    count: int = 8
    grid: bool = False
    model: str | None = None
    threshold: float = THRESHOLD
    drop_recall: float = DROP_RECALL
    repo_ref: str | None = None

    def select(self, facts: RepoFacts, embedder: Embedder,
               cores: dict[str, str]) -> list[Verdict]:
        verdicts = []
        failing = failing_tests(self.repo, self.targets)
        with tempfile.TemporaryDirectory(prefix="engram-build-") as tmp:
            for target in self.targets:
                if target.location in failing:
                    verdicts.append(Verdict(target.location, False, failing[target.location],
                                            0.0))
                    continue
                ungraded = through_answer(self.repo, target)
                if ungraded is not None:
                    verdicts.append(Verdict(target.location, False, ungraded, 0.0,
                                            through_answer=False))
                    continue
                info = analyse(self.repo, target, facts)
                units = true_units(target, info, cores.get(target.namespace))
                verdict, context = check_target(self.repo, target, info.signature, units, embedder,
                                                Path(tmp),
                                                self.threshold, self.drop_recall)
                verdict.through_answer = True
                if verdict.kept and self.model:
                    verdict.generated = asyncio.run(self._generate(target, info.signature,
                                                                   context))
                    if verdict.generated:
                        verdict.kept = False
                        verdict.reason = ("generation: the model passes the target's tests "
                                          "from the top-10 context alone")
                verdicts.append(verdict)
        return verdicts

    async def _generate(self, target: Target, signature: str, context: list[str]) -> bool:
        from memory.llm.client import LLM, LLMConfig
        from replay.sandbox.sandbox import Limits

        llm = LLM(LLMConfig(model=self.model or ""))
        return await _generation_passes(llm, self.repo, target, signature, context,
                                        Limits(timeout=60.0))

    async def _llm_inputs(self, facts: RepoFacts, targets: list[Target],
                          stats: RewriteStats) -> tuple[dict[str, str], dict]:
        from memory.llm.client import LLM, LLMConfig, LLMError

        llm = LLM(LLMConfig(model=self.model or ""))
        cores: dict[str, str] = {}
        rewrites: dict[str, dict[str, list[str]]] = {}
        for target in targets:
            try:
                core = await _describe(llm, self.repo, target)
            except LLMError:
                core = None
            if core:
                cores[target.namespace] = core
            info = analyse(self.repo, target, facts)
            units = [u for u in true_units(target, info, core) if u.type not in REAL_TYPES]
            rewrites[target.namespace] = await llm_rewrites(llm, target.qualname, units, stats)
        return cores, rewrites

    def run(self, embedder: Embedder | None = None) -> dict[str, Any]:
        from memory.index.embed import get_embedder

        facts = repo_facts(self.repo)
        stats = RewriteStats()
        cores: dict[str, str] = {}
        rewrites: dict[str, dict[str, list[str]]] = {}
        if self.model:
            cores, rewrites = asyncio.run(self._llm_inputs(facts, self.targets, stats))
        verdicts = self.select(facts, embedder or get_embedder(), cores)
        kept = [t for t, v in zip(self.targets, verdicts, strict=True) if v.kept]
        outlines = build_outlines(self.repo, kept, self.count, self.seed, grid=self.grid,
                                  facts=facts, cores=cores, rewrites=rewrites,
                                  repo_ref=self.repo_ref)
        self.out.mkdir(parents=True, exist_ok=True)
        for outline in outlines:
            (self.out / f"{outline['id']}.json").write_text(json.dumps(outline, indent=1)
                                                            + "\n")
        report = {"repo": self.repo_ref or str(self.repo), "seed": self.seed,
                  "grid": self.grid, "model": self.model, "threshold": self.threshold,
                  "drop_recall": self.drop_recall,
                  "targets": len(self.targets), "kept": len(kept),
                  "dropped": [asdict(v) for v in verdicts if not v.kept],
                  "selection": [asdict(v) for v in verdicts],
                  "distractor_rewrites": {"asked": stats.asked, "fallbacks": stats.fallbacks},
                  "outlines": [{"id": o["id"], "k": len(o["samples"]), "subset": o["subset"],
                                "queries": sum(len(t["queries"]) for t in o["topics"])}
                               for o in outlines]}
        (self.out / REPORT).write_text(json.dumps(report, indent=1) + "\n")
        return report


def summary(report: dict[str, Any]) -> list[str]:
    """The printed summary of a build report."""
    graded = [v for v in report["selection"] if v.get("through_answer") is not None]
    lines = [f"sample selection: {report['kept']} of {report['targets']} targets kept, "
             f"{len(report['dropped'])} dropped",
             f"  the original function through an answer passes its tests for "
             f"{sum(bool(v['through_answer']) for v in graded)} of {len(graded)} targets "
             "graded (oracle's pass@1 1.0 on the samples kept)"]
    lines += [f"  dropped {d['location']}: {d['reason']}" for d in report["dropped"]]
    lines += [f"{o['id']}: {o['k']} samples, {o['queries']} queries, {o['subset']}"
              for o in report["outlines"]]
    rewrites = report["distractor_rewrites"]
    if rewrites["asked"]:
        lines.append(f"distractor rewrites by the LLM: {rewrites['asked']} asked, "
                     f"{rewrites['fallbacks']} fell back to templates")
    return lines
