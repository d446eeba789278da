"""Benchmark the LongCodeQA and SWE-ContextBench sources on the demo (not collected by
pytest; run it by hand).

    .venv/bin/python -m tests.bench_qa_experience [--backends full,rag,mem0r]

With the context-reading scripted models (tests/replay/qa_reader.py and
experience_reader.py: they can say only what their prompt holds; a backend's memory
prompts are answered literally by tests/replay/reader.py's):
1. ``qa``: the demo's hand-written questions, accuracy per context bracket (1/8, 1/4,
   1/2, all of the scripted model's 8192-token window) and the share of questions
   whose answering code was in the context, per backend;
2. ``experience``: the demo's chains, the five settings' resolved rate, prompt tokens
   per related task (and as a share of no experience's), memory tokens spent taking in
   the free pool.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from replay.core.runner import Replay, ReplayConfig
from replay.core.sources import load_source
from replay.locoeval import DEMO
from replay.reporting.report import summarize
from tests.conftest import SCRIPT, _register_scripted
from tests.replay.experience_reader import ExperienceReader
from tests.replay.qa_reader import QAReader
from tests.replay.reader import ContextReader


def run(source: Any, backends: list[str], out: Path) -> list[dict[str, Any]]:
    replay = Replay(ReplayConfig(backends=backends, model="scripted/bench", out=out,
                                 max_tokens=256))
    try:
        return asyncio.run(replay.run([source]))
    finally:
        replay.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="full,rag,mem0r")
    args = parser.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    _register_scripted()
    SCRIPT.count_prompt = True
    memory = ContextReader([], DEMO / "inventory")
    with tempfile.TemporaryDirectory() as tmp:
        [qa] = load_source(DEMO / "qa" / "inventory-qa.json")
        SCRIPT.default = QAReader([qa])
        rows = summarize(run(qa, backends, Path(tmp) / "qa"))["backends"]
        print("qa (LongCodeQA) on the demo: accuracy / evidence in context, per bracket")
        for name, row in rows.items():
            cells = "  ".join(f"{b}: {row[f'qa_{b}']:.2f} / {row[f'qa_evidence_{b}']:.2f}"
                              for b in ("1/8", "1/4", "1/2", "all"))
            print(f"  {name:8} {cells}  (errors {row['errors']})")
        [chains] = load_source(DEMO / "experience" / "inventory-chains.json")
        reader = ExperienceReader(chains, DEMO / "inventory")

        def reply(messages: list[dict[str, Any]]) -> str:
            system = str(messages[0]["content"]) if messages[0]["role"] == "system" else ""
            said = memory.memory_reply(system, str(messages[-1]["content"]))
            return said if said is not None else reader(messages)

        SCRIPT.default = reply
        summary = summarize(run(chains, backends, Path(tmp) / "exp"))
        print("experience (SWE-ContextBench) on the demo: related tasks "
              f"({len(chains.related)}) per setting")
        for key, row in summary["experience"].items():
            print(f"  {key:24} resolved {row['resolved']:.2f}  prompt tok/task "
                  f"{row['prompt_tokens']:.0f} ({row.get('tokens_ratio') or 0:.2f}× none)  "
                  f"pool tok {row['pool_tokens']:.0f}")


if __name__ == "__main__":
    main()
