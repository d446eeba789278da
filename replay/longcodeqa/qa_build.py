"""``engram replay build REPO --qa``: multiple-choice questions from a repository's own facts.

Facts come from the standard library's ``ast`` over the repository's non-test Python
files (sorted by path): which function raises which exception, which module defines
which top-level name, what a parameter defaults to. Each question's three wrong
options are real facts of the same kind from the nearest files (same file first,
then outward in path order) that do not hold for the question's subject, picked
by a RNG seeded with ``--seed``. With ``--model``, LongCodeBench's contamination
filter drops the questions the model answers right without any repository context
(asked through the structured-output path: a letter among A-D); without a model
the filter is skipped and the build says so.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.locoeval.prepare import is_test_file
from replay.longcodeqa.qa import LETTERS, QASet, Question

NEIGHBOURS = 6  # wrong options are drawn among this many nearest candidates
CONTAMINATION_SYSTEM = (
    "Answer this multiple-choice question about the repository {repo} without the "
    "repository's code in front of you: from what you already know. Reply with the letter "
    'of the option you think is right, as JSON: {{"answer": "A"}}.')
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string",
                                                             "enum": list(LETTERS)}},
                 "required": ["answer"], "additionalProperties": False}


@dataclass(frozen=True)
class Fact:
    """One thing the code says: ``kind`` raises | defines | default (and ``function``: a
    function that exists, a candidate wrong option for "which function raises X")."""

    kind: str
    path: str
    subject: str  # qualname (raises, default) or top-level name (defines)
    value: str  # exception name | module path | default's source
    evidence: str  # the source line that says it
    param: str = ""  # default: the parameter
    order: int = 0  # the file's place in path order (neighbourhood)


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            out += [(f"{node.name}.{sub.name}", sub) for sub in node.body
                    if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef)]
    return out


def _raised(node: ast.Raise) -> str | None:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(exc, ast.Name):
        return exc.id
    if isinstance(exc, ast.Attribute):
        return exc.attr
    return None


def file_facts(path: str, source: str, order: int) -> list[Fact]:
    tree = ast.parse(source)
    lines = source.splitlines()

    def line(node: ast.AST) -> str:
        return lines[node.lineno - 1].strip()  # type: ignore[attr-defined]

    facts = [Fact("defines", path, node.name, path, line(node), order=order)
             for node in tree.body
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
             and not node.name.startswith("_")]
    facts += [Fact("defines", path, target.id, path, line(node), order=order)
              for node in tree.body if isinstance(node, ast.Assign)
              for target in node.targets
              if isinstance(target, ast.Name) and target.id.isupper()]
    for qual, fn in _functions(tree):
        facts.append(Fact("function", path, qual, "", line(fn), order=order))
        seen: set[str] = set()
        for node in ast.walk(fn):
            name = _raised(node) if isinstance(node, ast.Raise) and node.exc else None
            if name and name not in seen:
                seen.add(name)
                facts.append(Fact("raises", path, qual, name, line(node), order=order))
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults,
                         strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                  if d is not None]
        facts += [Fact("default", path, qual, ast.unparse(d), line(fn), a.arg, order)
                  for a, d in pairs]
    return facts


def repo_qa_facts(repo: Path) -> list[Fact]:
    files = sorted(p for p in repo.rglob("*.py")
                   if not is_test_file(p.relative_to(repo).as_posix())
                   and not {".git", ".venv", "venv"} & set(p.relative_to(repo).parts))
    facts: list[Fact] = []
    for order, file in enumerate(files):
        try:
            facts += file_facts(file.relative_to(repo).as_posix(), file.read_text("utf-8"),
                                order)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
    return facts


def _nearest(fact: Fact, values: list[tuple[int, str]], rng: random.Random) -> list[str] | None:
    """Three distinct wrong values among the nearest candidates, or None."""
    ranked: list[str] = []
    for _, value in sorted(values, key=lambda v: abs(v[0] - fact.order)):
        if value not in ranked:
            ranked.append(value)
    pool = ranked[:NEIGHBOURS]
    return rng.sample(pool, 3) if len(pool) >= 3 else None


def _three(values: list[str]) -> tuple[str, str, str]:
    return values[0], values[1], values[2]


def question_for(fact: Fact, facts: list[Fact], rng: random.Random) -> Question | None:
    """The question a fact makes, with real neighbouring facts as wrong options."""
    qid = f"{fact.kind}:{fact.path}::{fact.subject}" + (f":{fact.param}" if fact.param else "")
    same = [f for f in facts if f.kind == fact.kind]
    if fact.kind == "raises":
        own = {f.value for f in same if (f.path, f.subject) == (fact.path, fact.subject)}
        wrong = _nearest(fact, [(f.order, f.value) for f in same if f.value not in own], rng)
        if wrong is not None:
            return Question(qid, f"Which exception does `{fact.subject}` in `{fact.path}` "
                                 "raise?", fact.value, _three(wrong), fact.evidence, fact.path)
        raisers = {(f.path, f.subject) for f in same if f.value == fact.value}
        names = [(f.order, f"`{f.subject}` in `{f.path}`") for f in facts
                 if f.kind == "function" and (f.path, f.subject) not in raisers]
        wrong = _nearest(fact, names, rng)
        if wrong is None:
            return None
        return Question(f"{qid}:who", f"Which of these functions raises `{fact.value}`?",
                        f"`{fact.subject}` in `{fact.path}`", _three(wrong),
                        fact.evidence, fact.path)
    if fact.kind == "function":
        return None
    if fact.kind == "defines":
        definers = {f.path for f in same if f.subject == fact.subject}
        wrong = _nearest(fact, [(f.order, f.path) for f in same if f.path not in definers], rng)
        if wrong is None:
            return None
        return Question(qid, f"Which module defines `{fact.subject}`?", fact.path,
                        _three(wrong), fact.evidence, fact.path)
    wrong = _nearest(fact, [(f.order, f.value) for f in same if f.value != fact.value], rng)
    if wrong is None:
        return None
    return Question(qid, f"What does the parameter `{fact.param}` of `{fact.subject}` in "
                         f"`{fact.path}` default to?", fact.value, _three(wrong),
                    fact.evidence, fact.path)


def build_questions(repo: Path, seed: int, count: int) -> list[Question]:
    """Up to ``count`` questions, the kinds taking turns, picked by a RNG seeded with ``seed``."""
    rng = random.Random(seed)
    facts = repo_qa_facts(repo)
    by_kind: dict[str, list[Question]] = {}
    for fact in facts:
        question = question_for(fact, facts, rng)
        if question is not None and question.id not in {q.id for q in
                                                        by_kind.get(fact.kind, [])}:
            by_kind.setdefault(fact.kind, []).append(question)
    for questions in by_kind.values():
        rng.shuffle(questions)
    picked: list[Question] = []
    while len(picked) < count and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(picked) < count:
                picked.append(by_kind[kind].pop())
    return picked


async def contaminated(questions: list[Question], llm: Any, repo_name: str,
                       seed: int) -> list[str]:
    """Ids of the questions ``llm`` answers right with no repository context."""
    dropped = []
    for question in questions:
        text, right = question.prompt(seed)
        answer = await llm.ask_json(CONTAMINATION_SYSTEM.format(repo=repo_name), text,
                                    ANSWER_SCHEMA, purpose="judge", name="qa_answer",
                                    max_tokens=16)
        if isinstance(answer, dict) and answer.get("answer") == right:
            dropped.append(question.id)
    return dropped


def build_qa(repo: Path, *, seed: int = 0, count: int = 20, model: str | None = None,
             repo_ref: str | None = None) -> tuple[QASet, dict[str, Any]]:
    """The question set and its build report (what the contamination filter did)."""
    import asyncio

    questions = build_questions(repo, seed, count)
    report: dict[str, Any] = {"seed": seed, "built": len(questions)}
    if model is None:
        report["contamination_filter"] = "skipped (no --model)"
    else:
        from memory.llm.client import LLM, LLMConfig

        llm = LLM(LLMConfig(model=model))
        dropped = asyncio.run(contaminated(questions, llm, repo.resolve().name, seed))
        questions = [q for q in questions if q.id not in dropped]
        report["contamination_filter"] = {"model": model, "dropped": dropped,
                                          "tokens": llm.ledger.tokens}
    report["kept"] = len(questions)
    name = repo.resolve().name
    return QASet(f"{name}-qa", repo_ref or str(repo), tuple(questions)), report
