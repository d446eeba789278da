"""Ingest throughput: turns per second that `engram memory ingest` feeds to a backend.

The session fixtures of tests/memory/fixtures/sessions (a Claude Code session of 4 turns,
a Codex rollout of 3), each copied COPIES times as sessions of their own, about a small
git repository (a copy of engram's memory/backends/cards package), ingested into each
backend named in a fresh data dir: once whole (every turn new), then once more (nothing
new: the cost of looking). The repository's index is built before the clock starts.
No model is called: cards keeps statements as said (``cards_facts=said``, what ingest
does by default with the embedded model), rag needs none; the embedded model's
tokenizer counts tokens.

    .venv/bin/python scripts/bench_ingest.py [--copies 20] [--backends cards,rag]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
FIXTURES = ROOT / "tests" / "memory" / "fixtures" / "sessions"


def make_repo(dest: Path) -> Path:
    shutil.copytree(ROOT / "memory" / "backends" / "cards", dest / "cards",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), "commit", "-qm", "tree"], check=True, env=env)
    return dest


def make_sessions(repo: Path, dest: Path, copies: int) -> list[Path]:
    files = []
    for n in range(copies):
        for name, ids in (("claude-code.jsonl", "b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"),
                          ("codex-rollout.jsonl", "019a6b10-2222-7333-8444-955566667777")):
            text = (FIXTURES / name).read_text().replace("__REPO__", str(repo))
            text = text.replace(ids, f"{ids[:-4]}{n:04d}")
            path = dest / f"{n:03d}-{'rollout-' if 'codex' in name else ''}{name}"
            path.write_text(text)
            files.append(path)
    return files


async def run(backend: str, repo: Path, files: list[Path], data: Path) -> dict[str, float]:
    from memory.ingest import IngestOptions, ingest, open_feeder

    options = (("cards_facts", "said"),) if backend == "cards" else ()
    feeder = open_feeder(IngestOptions(repo=repo, backend=backend, model="local/smollm2",
                                       data_dir=data, backend_options=options))
    result: dict[str, float] = {}
    for label in ("new", "again"):
        wall, cpu = time.perf_counter(), time.process_time()
        reports = await ingest(feeder, files)
        result[f"{label}_turns"] = sum(r.turns for r in reports)
        result[f"{label}_s"] = time.perf_counter() - wall
        result[f"{label}_cpu"] = time.process_time() - cpu
        assert not any(r.error for r in reports), [r.error for r in reports if r.error]
        feeder.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--backends", default="cards,rag")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = make_repo(base / "repo")
        (base / "sessions").mkdir()
        files = make_sessions(repo, base / "sessions", args.copies)
        from memory.index.repo import open_index

        for backend in args.backends.split(","):
            data = base / f"data-{backend}"
            open_index(repo, data)  # the index, before the clock
            found = asyncio.run(run(backend, repo, files, data))
            rate = found["new_turns"] / found["new_s"] if found["new_s"] else 0.0
            print(f"{backend:6} {int(found['new_turns']):4} turns from {len(files)} files: "
                  f"{found['new_s']:.2f} s ({found['new_cpu']:.2f} s CPU) = {rate:.1f} turns/s;"
                  f" again: {int(found['again_turns'])} new turns in {found['again_s']:.2f} s")


if __name__ == "__main__":
    main()
