"""The MCP server's first answers, timed as a client sees them (not collected by pytest).

    .venv/bin/python -m tests.bench_mcp [--pauses 0,3,6] [--runs 2]

For each pause and run: ``engram mcp`` started by the SDK's stdio client over a fresh
two-function git repository and data dir, as an agent drives it: ``initialize``, one
``recall``, the pause (the model thinking), then the first ``remember``. Printed: the
seconds to ``initialize``, of the recall and of that first remember (the writing session
opens after the server's first answer; a remember sooner than it is ready waits for it).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from tests.conftest import make_repo
from tests.tui.test_mcp import A_PY, call, served


async def once(pause: float) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"a.py": A_PY, "README.md": "a tiny repo\n"})
        start = time.perf_counter()
        async with served(repo, Path(tmp) / "data") as session:
            ready = time.perf_counter()
            bad, found = await call(session, "recall", query="what does f return?")
            recalled = time.perf_counter()
            if bad:
                raise SystemExit(f"recall refused: {found}")
            await asyncio.sleep(pause)
            asked = time.perf_counter()
            bad, kept = await call(session, "remember", text="f must return an int.",
                                   about="a.py::f")
            done = time.perf_counter()
            if bad:
                raise SystemExit(f"remember refused: {kept}")
    return ready - start, recalled - ready, done - asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pauses", default="0,3,6",
                        help="seconds between the recall and the first remember")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for pause in (float(p) for p in args.pauses.split(",")):
        for _ in range(args.runs):
            init, recall, remember = asyncio.run(once(pause))
            print(f"pause {pause:g} s: initialize {init:.2f} s, recall {recall:.2f} s, "
                  f"first remember {remember:.2f} s", flush=True)


if __name__ == "__main__":
    main()
