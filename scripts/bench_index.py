"""Benchmark the repository index on a real ~100k-line Python tree.

Copies the installed ``textual`` and ``rich`` sources into a temporary git
repository, then measures: cold build (total seconds, chunks/s), reopen, a
one-file incremental refresh, and hybrid search latency (p50/p95).

    .venv/bin/python scripts/bench_index.py [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUERIES = [
    "render a widget to the screen", "parse a color from a string", "handle a key press",
    "measure the width of text", "compose child widgets", "apply a CSS stylesheet",
    "scroll to the end of a log", "format a table with borders", "highlight syntax",
    "wrap long lines of text", "emit a message to the parent", "reactive attribute changed",
    "load a theme", "progress bar update", "traceback pretty printing",
]


def build_tree(dest: Path) -> int:
    import rich
    import textual

    lines = 0
    for package in (textual, rich):
        src = Path(package.__file__).parent
        shutil.copytree(src, dest / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    for path in dest.rglob("*.py"):
        lines += path.read_text("utf-8", "replace").count("\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), "commit", "-qm", "tree"], check=True, env=env)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    from memory.embed import VectorCache, get_embedder
    from memory.repo import RepoIndex
    from memory.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        lines = build_tree(root)
        t = time.perf_counter()
        embedder = get_embedder()
        print(f"embedder load: {time.perf_counter() - t:.1f}s")
        store_path = Path(tmp) / "index.lance"

        t = time.perf_counter()
        index = RepoIndex(root, Store(store_path), embedder)
        report = index.refresh()
        cold = time.perf_counter() - t
        print(f"tree: {lines} lines of Python; {report.summary()}")
        print(f"cold build: {cold:.1f}s, {report.chunks_embedded / cold:.0f} chunks/s")

        t = time.perf_counter()
        reopened = RepoIndex(root, Store(store_path), embedder)
        again = reopened.refresh()
        print(f"reopen + refresh (nothing changed): {time.perf_counter() - t:.2f}s "
              f"({again.chunks_embedded} embedded)")

        target = root / "rich" / "color.py"
        target.write_text(target.read_text() + "\n\ndef bench_extra():\n    return 1\n")
        t = time.perf_counter()
        inc = reopened.refresh()
        print(f"one-file incremental refresh: {time.perf_counter() - t:.2f}s "
              f"({inc.files_changed} file, {inc.chunks_embedded} chunks)")

        reopened.search("warm up", 10)
        times = []
        for i in range(args.queries):
            q = QUERIES[i % len(QUERIES)]
            if hasattr(embedder, "cache"):  # queries repeat here; a user's rarely do
                embedder.cache = VectorCache()
            t = time.perf_counter()
            reopened.functions(q, 10)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"hybrid search (top-10 functions), {len(times)} queries: "
              f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
