"""Does the embedded model still loop? 20 repository questions, old settings vs new.

Each question is asked as the app asks a first question: ``open_session`` on a git copy
of a repository (the bundled demo, ``replay/locoeval/demo/inventory``, unless ``--repo``), the
``full`` backend (the query and the top-10 repository functions), the embedded
``local/smollm2``, ``Agent.ask`` streaming the answer. Nothing is committed, so every
question starts from the same state.

Settings: ``old`` is what engram did before (greedy decoding, no repetition penalty,
no stop); ``new`` is the model's ``Sampling`` from ``memory.llm.local.LOCAL_MODELS`` and the
agent's stop on repetition. ``both`` asks every question under each, in alternating
order, with llama.cpp's prompt cache cleared before every answer (a repeated prompt would
otherwise be read from the cache and its first token come at once).

Per setting it prints:
- ``repeated``: answers whose text, as the developer gets it, holds a repeated paragraph
  (a paragraph or line of 5+ words twice, or a sentence of 5+ words three times; fenced
  code aside); a deliberately simpler check than ``memory.llm.repetition``'s;
- ``looped``: answers whose stream repeated itself (``memory.llm.repetition`` fired: the
  stop under ``new``, the same detector run on the whole answer under ``old``);
- first-token time (seconds from ``ask`` to the first streamed piece: retrieval and
  reading the prompt), median and spread; answer length; time per answer.

    .venv/bin/python scripts/bench_loops.py --settings both
    .venv/bin/python scripts/bench_loops.py --settings old --questions 5 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TOKENIZERS_PARALLELISM": "false"}
DEMO = Path(__file__).resolve().parents[1] / "replay" / "locoeval" / "demo" / "inventory"
MODEL = "local/smollm2"

QUESTIONS = (
    "Where is the price parsing logic?",
    "How does parse_price handle a comma as the decimal separator?",
    "What happens when Stock.remove is asked for more units than are on hand?",
    "Explain how order_total computes the total of an order.",
    "Which function rounds amounts to cents, and how does it round halves?",
    "Where are SKUs normalized, and what rules does normalize_sku apply?",
    "What does low_stock return, and in which order?",
    "How are business days counted between two dates?",
    "Write a function that parses a list of price strings and returns their sum.",
    "What error type does the library raise on purpose, and where is it defined?",
    "How does format_price format a large amount?",
    "What does split_batches do with a size of zero?",
    "Summarize what each module of the inventory package is for.",
    "How would I add a new currency setting next to CURRENCY?",
    "What does stock_report produce for each SKU?",
    "Write a test for parse_price that checks a negative price is refused.",
    "How does slugify turn a product name into a slug?",
    "What configuration values does the package define, and where are they used?",
    "Is there any place where floats are used for money?",
    "How does parse_day accept dates, and what does it do with a bad date?",
)


def git_copy(source: Path, dest: Path) -> Path:
    """``source`` as a fresh one-commit git repository at ``dest``."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", ".git"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", "-C", str(dest), *argv], check=True, env=env)
    return dest


# -- the independent check: does the text hold a repeated paragraph? ---------------------
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text)).strip().lower()


def has_repeated_paragraph(text: str) -> bool:
    prose = _FENCED.sub("\n\n", text)
    for units, times in ((re.split(r"\n\s*\n", prose), 2), (prose.splitlines(), 2),
                         (_SENTENCE_END.split(prose), 3)):
        counted = Counter(u for u in map(_norm, units) if len(u.split()) >= 5)
        if any(n >= times for n in counted.values()):
            return True
    return False


# -- running -----------------------------------------------------------------------------
@dataclasses.dataclass
class Answer:
    setting: str
    question: str
    text: str
    first_token_s: float
    seconds: float
    completion_tokens: int
    stopped: bool
    looped: bool
    repeated: bool
    error: str | None
    stop: dict[str, Any] | None = None  # turn.meta["stopped"]: the rule, what repeated


def apply_setting(agent: Any, setting: str) -> None:
    from memory.llm.local import GREEDY, LOCAL_MODELS, load_local_model
    from memory.turn.agent import AgentConfig

    name = MODEL.split("/", 1)[1]
    local = load_local_model(name)
    local.sampling = GREEDY if setting == "old" else LOCAL_MODELS[name].sampling
    config: AgentConfig = agent.config
    agent.config = dataclasses.replace(config, stop_repetition=setting == "new")
    local.llama.reset()  # no prompt read from the cache: every answer reads its own


async def ask(agent: Any, setting: str, question: str) -> Answer:
    from memory.llm.repetition import find_repetition

    apply_setting(agent, setting)
    first: list[float] = []
    start = time.perf_counter()

    def on_token(_: str) -> None:
        if not first:
            first.append(time.perf_counter() - start)

    turn = await agent.ask(question, commit=False, on_token=on_token)
    seconds = time.perf_counter() - start
    stopped = bool(turn.meta.get("stopped"))
    looped = stopped or find_repetition(turn.assistant) is not None
    return Answer(setting, question, turn.assistant, first[0] if first else float("nan"),
                  seconds, turn.usage.get("answer").completion_tokens, stopped, looped,
                  has_repeated_paragraph(turn.assistant), turn.error,
                  turn.meta.get("stopped"))


def summary(answers: list[Answer]) -> dict[str, Any]:
    firsts = [a.first_token_s for a in answers if a.first_token_s == a.first_token_s]
    n = len(answers)
    return {
        "answers": n,
        "repeated": sum(a.repeated for a in answers),
        "looped": sum(a.looped for a in answers),
        "stopped": sum(a.stopped for a in answers),
        "errors": sum(a.error is not None for a in answers),
        "first_token_median_s": round(statistics.median(firsts), 2) if firsts else None,
        "first_token_quartiles_s": [round(q, 2) for q in statistics.quantiles(firsts, n=4)]
        if len(firsts) >= 2 else None,
        "completion_tokens_median": statistics.median(a.completion_tokens for a in answers),
        "seconds_per_answer": round(sum(a.seconds for a in answers) / max(1, n), 1),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from memory.session import SessionOptions, open_session

    work = Path(tempfile.mkdtemp(prefix="bench-loops-"))
    try:
        repo = git_copy(Path(args.repo), work / "repo")
        session = open_session(SessionOptions(repo=repo, backend="full", model=MODEL,
                                              data_dir=work / "data", record=False,
                                              max_tokens=args.max_tokens))
        agent = session.agent
        settings = ["old", "new"] if args.settings == "both" else [args.settings]
        answers: list[Answer] = []
        await agent.context("warm up")  # load MiniLM and the model before timing
        for i, question in enumerate(QUESTIONS[:args.questions]):
            order = settings if i % 2 == 0 else settings[::-1]
            for setting in order:
                answer = await ask(agent, setting, question)
                answers.append(answer)
                print(f"{setting:3} q{i + 1:02} first {answer.first_token_s:5.2f}s "
                      f"{answer.completion_tokens:4} tok "
                      f"{'STOPPED ' if answer.stopped else ''}"
                      f"{'looped ' if answer.looped else ''}"
                      f"{'REPEATED' if answer.repeated else ''}", flush=True)
        return {"settings": {s: summary([a for a in answers if a.setting == s])
                             for s in settings},
                "answers": [dataclasses.asdict(a) for a in answers]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", choices=("old", "new", "both"), default="both")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--max-tokens", type=int, default=512, help="the app's answer cap")
    parser.add_argument("--repo", default=str(DEMO), help="a directory to ask about")
    parser.add_argument("--json", help="write every answer and the summary here")
    args = parser.parse_args()
    if not 1 <= args.questions <= len(QUESTIONS):
        parser.error(f"--questions must be 1-{len(QUESTIONS)}")
    os.environ.update(OFFLINE)
    result = asyncio.run(run(args))
    print()
    for setting, figures in result["settings"].items():
        n = figures["answers"]
        print(f"{setting}: repeated paragraph {figures['repeated']}/{n} "
              f"({figures['repeated'] / n:.0%}), looped {figures['looped']}/{n}, "
              f"stopped {figures['stopped']}, errors {figures['errors']}; first token "
              f"median {figures['first_token_median_s']} s "
              f"(quartiles {figures['first_token_quartiles_s']}); "
              f"{figures['completion_tokens_median']} tokens median; "
              f"{figures['seconds_per_answer']} s per answer")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
