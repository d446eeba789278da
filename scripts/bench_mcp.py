"""Figures of ``engram mcp``: server start to first tool answer (the whole process, checked
to import no torch), and ``recall`` p50/p95 on a store of 1,000 memories (no model call).

    .venv/bin/python scripts/bench_mcp.py [--memories 1000] [--calls 200]

Builds a throwaway git repository and data dir under a temp folder; nothing else is read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBE = """import sys, runpy
sys.argv = ["engram"] + sys.argv[1:]
import atexit
atexit.register(lambda: sys.stderr.write("HEAVY " + ",".join(
    m for m in ("torch", "litellm", "transformers") if m in sys.modules) + "\\n"))
from tui.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's live children (the server)."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def make_repo(root: Path, files: int = 40) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for n in range(files):
        (repo / f"mod{n}.py").write_text("".join(
            f"def func_{n}_{k}(x):\n    return x + {k}\n\n\n" for k in range(10)))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def fill(repo: Path, data: Path, count: int, files: int = 40) -> None:
    """``count`` kept memories, each anchored on a function, written as the server would."""
    import numpy as np

    from memory.backends.cards.kept import Kept
    from memory.backends.cards.stale import StalenessWatch
    from memory.index.embed import get_embedder
    from memory.recall.keeper import Keeper

    keeper = Keeper(repo, data)
    watch = StalenessWatch(keeper.root)
    texts = [f"func_{i % files}_{i % 10} in mod{i % files}.py must keep rule {i}: "
             f"{['validate input', 'log calls', 'return ints', 'never raise'][i % 4]}."
             for i in range(count)]
    vectors = get_embedder().embed(texts)
    from memory.backends.cards.graph import Node

    items = []
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        location = f"mod{i % files}.py::func_{i % files}_{i % 10}"
        node = Node(f"n{i}", "fact", "bench", text, 10, locations=[location])
        watch.anchor(node)
        a = watch.anchors[node.id]
        items.append((Kept(f"{i:012d}", text, location, [location], "bench", i, "mcp",
                           anchor_location=a.location, anchor_blob=a.blob,
                           anchor_code=a.code, anchor_head=a.head), np.asarray(vector)))
    keeper.store.add_many(items)


async def first_answer(repo: Path, data: Path) -> tuple[float, float, str]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    with tempfile.TemporaryFile("w+") as errlog:
        params = StdioServerParameters(
            command=sys.executable, args=["-c", PROBE, "mcp", str(repo), "--data-dir", str(data)],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
        start = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (r, w), \
                ClientSession(r, w) as session:
            await session.initialize()
            result = await session.call_tool("recall",
                                             {"query": "which rule does func_3_3 keep?"})
            took = time.perf_counter() - start
            cpu = _children_cpu()
            assert not result.is_error, result.content
        errlog.seek(0)
        heavy = next((line.split(" ", 1)[1].strip() for line in errlog
                      if line.startswith("HEAVY")), "?")
    return took, cpu, heavy


async def recall_times(repo: Path, data: Path, calls: int) -> tuple[list[float], float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "tui.cli", "mcp", str(repo), "--data-dir",
                                         str(data)],
                                   env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    words = ["validate input", "log calls", "return ints", "never raise"]
    times: list[float] = []
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        # the writing session opens after the first answer: a remember waits for it, so
        # the timed recalls do not share the CPU with the index refresh
        await session.call_tool("recall", {"query": "warm up"})
        start = time.perf_counter()
        await session.call_tool("remember", {"text": "func_1_1 must stay pure."})
        print(f"first remember (waits for the writing session: index refresh, the embedded "
              f"model's tokenizer): {time.perf_counter() - start:.2f} s")
        cpu = _children_cpu()
        for i in range(calls):
            query = f"what must func_{i % 40}_{i % 10} do? {words[i % 4]}"
            start = time.perf_counter()
            result = await session.call_tool("recall", {"query": query, "limit": 5})
            times.append(time.perf_counter() - start)
            assert not result.is_error and json.loads(result.content[0].text)
        cpu = _children_cpu() - cpu
    return times, cpu / calls


def brief_time(repo: Path, data: Path) -> tuple[float, float]:
    start, before = time.perf_counter(), os.times()
    subprocess.run([sys.executable, "-m", "tui.cli", "recall", "-", "--brief", "--repo",
                    str(repo), "--data-dir", str(data)], input='{"prompt": "change func_3_3"}',
                   text=True, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    after = os.times()
    return (time.perf_counter() - start,
            after.children_user + after.children_system - before.children_user
            - before.children_system)


def in_process_recall_cpu(repo: Path, data: Path, calls: int) -> list[float]:
    """CPU seconds of each ``Keeper.recall`` in this process (no protocol, no other load)."""
    from memory.recall.keeper import Keeper

    keeper = Keeper(repo, data)
    keeper.recall("warm up")
    out = []
    for i in range(calls):
        start = time.process_time()
        keeper.recall(f"what must func_{i % 40}_{i % 10} do?", 5)
        out.append(time.process_time() - start)
    return sorted(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, data = make_repo(Path(tmp)), Path(tmp) / "data"
        subprocess.run([sys.executable, "-m", "tui.cli", "index", "--repo", str(repo),
                        "--data-dir", str(data)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
        fill(repo, data, args.memories)
        starts = [asyncio.run(first_answer(repo, data)) for _ in range(3)]
        heavy = {h for _, _, h in starts}
        assert heavy == {""}, f"the server imported {heavy}"
        times, server_cpu = asyncio.run(recall_times(repo, data, args.calls))
        times.sort()
        briefs = sorted(brief_time(repo, data) for _ in range(3))
        cpu = in_process_recall_cpu(repo, data, args.calls)
    p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95) - 1]
    print(f"server start to first recall answer: wall "
          f"{', '.join(f'{t:.2f}' for t, _, _ in starts)} s; the server's CPU by then "
          f"{', '.join(f'{c:.2f}' for _, c, _ in starts)} s (no torch, no litellm imported); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"recall on {args.memories} memories, {args.calls} calls: p50 {p50 * 1000:.1f} ms, "
          f"p95 {p95 * 1000:.1f} ms (wall, through the protocol); the server's CPU per "
          f"call {server_cpu * 1000:.1f} ms")
    print(f"recall in process, CPU per call: p50 {cpu[len(cpu) // 2] * 1000:.1f} ms, "
          f"p95 {cpu[int(len(cpu) * 0.95) - 1] * 1000:.1f} ms")
    print(f"engram recall - --brief (whole process): median wall {briefs[1][0]:.2f} s, "
          f"CPU {briefs[1][1]:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
