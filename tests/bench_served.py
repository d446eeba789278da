"""Memory through a self-hosted server (not collected by pytest).

    .venv/bin/python -m tests.bench_served [--backends mem0,mem0r] [--turns 6]
        [--src DIR] [--env KEY=VALUE ...]

Starts llama-cpp-python's OpenAI-compatible server with the shipped SmolLM2 on a free
loopback port, and for each backend runs ``engram chat --headless`` (a fresh process,
a fresh data dir and user cache) with the developer statements below, through
``--model openai/smollm2`` at that server. Printed per backend: memories stored (ADD
minus DELETE records of the transcript), updates skipped or failed, the structured line
engram prints, and the seconds the chat took.

``--src DIR`` runs another checkout of engram (e.g. the commit before the server work,
extracted with ``git archive``) against the same server; an engram without
``--api-base`` is pointed at it with ``OPENAI_API_BASE`` (``--env``) as a user would.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import DB, FORMS, make_repo
from tests.served import STATEMENTS, llama_server


def run_chat(backend: str, served, repo: Path, turns: int, src: Path | None,
             env_extra: dict[str, str], api_base_flag: bool) -> dict:
    home = Path(tempfile.mkdtemp(prefix="engram-served-"))
    env = {**os.environ, "ENGRAM_HOME": str(home), **env_extra}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    argv = [sys.executable, "-m", "tui.cli", "chat", "--headless", "--repo", str(repo),
            "--backend", backend, "--model", served.model, "--max-tokens", "48"]
    if api_base_flag:
        argv += ["--api-base", served.base]
    started = time.monotonic()
    result = subprocess.run(argv, input="\n".join(STATEMENTS[:turns]) + "\n", text=True,
                            capture_output=True, env=env, cwd=src or Path.cwd(), timeout=3600)
    seconds = time.monotonic() - started
    records = []
    for path in home.glob("repos/*/sessions/*.jsonl"):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    memory = [r for r in records if r.get("type") == "memory"]
    ops = [r.get("op") for r in memory]
    stored = ops.count("ADD") - ops.count("DELETE")
    skipped = sum(1 for op in ops if op in ("skipped", "error"))
    line = next((x for x in result.stderr.splitlines() if "structured calls" in x), "")
    reasons = [r.get("text", "")[:160] for r in memory if r.get("op") in ("skipped", "error")]
    return {"backend": backend, "exit": result.returncode, "stored": stored,
            "skipped": skipped, "ops": ops, "structured": line.strip(), "seconds": seconds,
            "reasons": reasons[:2], "stderr_tail": result.stderr[-600:]
            if result.returncode else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="mem0,mem0r")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--src", type=Path, default=None)
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    env_extra = dict(pair.split("=", 1) for pair in args.env)
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "demo", {"app/forms.py": FORMS, "app/db.py": DB})
        with llama_server(Path(tmp) / "server") as served:
            env_extra = {k: v.replace("{base}", served.base) for k, v in env_extra.items()}
            for backend in args.backends.split(","):
                row = run_chat(backend, served, repo, args.turns, args.src, env_extra,
                               api_base_flag=args.src is None)
                print(json.dumps(row, indent=1), flush=True)


if __name__ == "__main__":
    main()
