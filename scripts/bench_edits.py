"""The edit engine, measured: can the embedded model write its blocks, and how long do
prepare, apply and undo take on a large file.

``format``: small editing tasks (one file shown in the prompt, one request each), asked
to the embedded ``local/smollm2`` with ``memory.acting.edits.EDIT_FORMAT`` as the system prompt,
under two prompts: ``rules`` (the system prompt alone) and ``example`` (the package's
worked example, ``example_messages()``, before the question). Per answer: does it hold
an edit marker, do its blocks parse, do they apply (``prepare`` ok), and is the result
right (the expected text in the file, the old one gone). The
first sample of each task is greedy (the model's own sampling), further ones at
temperature 0.7 with seeds 1, 2, ...

``engine``: a synthetic Python file of ``--lines`` lines in a fresh git repository; one
block that changes a line near the middle, exact and then with its indentation off
(the whitespace-tolerant path); median milliseconds of ``prepare``, and of ``apply``
followed by ``undo``, over ``--repeat`` runs.

    .venv/bin/python scripts/bench_edits.py engine
    .venv/bin/python scripts/bench_edits.py format --samples 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TOKENIZERS_PARALLELISM": "false"}
IDENTITY = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}

# (file, its content, the request, text expected after, text expected gone)
TASKS = [
    ("greet.py", "def greet():\n    return 'hi'\n",
     "Make greet return 'hello' instead of 'hi'.", "'hello'", "'hi'"),
    ("calc.py", "def add(a, b):\n    return a - b\n",
     "Fix add: it must return a + b.", "a + b", "a - b"),
    ("config.py", "DEBUG = True\nPORT = 8000\n", "Set PORT to 9000.", "PORT = 9000", "8000"),
    ("README.md", "# Demo\n\nA small demo.\n", "Change the title to '# Inventory'.",
     "# Inventory", "# Demo"),
    ("names.py", "NAMES = ['ann', 'bob']\n", "Add 'cid' to NAMES.", "'cid'", ""),
    ("util.py", "def double(x):\n    return x * 3\n",
     "double returns x * 3; make it return x * 2.", "x * 2", "x * 3"),
    ("loop.py", "for i in range(10):\n    print(i)\n",
     "Make the loop count to 5 instead of 10.", "range(5)", "range(10)"),
    ("hello.txt", "", "Create the file hello.txt with the line: hello world",
     "hello world", ""),
]


def make_repo(root: Path, files: dict[str, str]) -> None:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for name, text in files.items():
        (root / name).write_text(text)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "start", "--allow-empty"],
                   check=True, env={**os.environ, **IDENTITY})


def prompt(name: str, content: str, request: str, example: bool) -> list[dict[str, str]]:
    from memory.acting.edits import EDIT_FORMAT
    from memory.acting.edits.instructions import example_messages

    shown = (f"File {name}:\n```\n{content}```\n\n" if content
             else "The repository has no file hello.txt yet.\n\n")
    system = {"role": "system",
              "content": "You are a coding assistant in a git repository.\n\n" + EDIT_FORMAT}
    return [system, *(example_messages() if example else []),
            {"role": "user", "content": shown + request}]


def bench_format(samples: int, max_tokens: int, show: bool) -> None:
    from memory.llm.local import load_local_model

    model = load_local_model("smollm2")
    print(f"smollm2, {len(TASKS)} tasks x {samples} sample(s), max {max_tokens} tokens")
    for example in (False, True):
        counts, seconds = _format_run(model, example, samples, max_tokens, show)
        n = counts.pop("answers")
        print(f"  {'example' if example else 'rules':8} "
              + "  ".join(f"{key} {value}/{n}" for key, value in counts.items())
              + f"   median {statistics.median(seconds):.1f} s per answer")


def _format_run(model: Any, example: bool, samples: int, max_tokens: int,
                show: bool) -> tuple[dict[str, int], list[float]]:
    from memory.acting.edits import has_blocks, parse, prepare

    counts = {"answers": 0, "marker": 0, "parsed": 0, "applies": 0, "right": 0}
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, content, request, wanted, gone) in enumerate(TASKS):
            root = Path(tmp) / f"task{index}"
            make_repo(root, {name: content} if content else {})
            for sample in range(samples):
                params = {"max_tokens": max_tokens} if sample == 0 else {
                    "max_tokens": max_tokens, "temperature": 0.7, "seed": sample}
                start = time.perf_counter()
                answer = model.generate(prompt(name, content, request, example), params).text
                seconds.append(time.perf_counter() - start)
                parsed = parse(answer)
                prepared = prepare(root, answer)
                after = {c.path: c.after.decode() for c in prepared.changes}.get(name, "")
                right = prepared.ok and wanted in after and (not gone or gone not in after)
                counts["answers"] += 1
                counts["marker"] += has_blocks(answer)
                counts["parsed"] += bool(parsed.edits) and parsed.ok
                counts["applies"] += prepared.ok
                counts["right"] += right
                if show:
                    print(f"--- {name} sample {sample}: applies={prepared.ok} right={right}\n"
                          f"{answer}\n>>> {prepared.message}\n")
    return counts, seconds


def big_file(lines: int) -> str:
    out = ['"""A synthetic module."""', ""]
    for i in range(lines // 4):
        out += [f"def function_{i}(x):", f"    return x + {i}", "", ""]
    return "\n".join(out) + "\n"


def bench_engine(lines: int, repeat: int) -> None:
    from memory.acting.edits import apply, prepare, undo

    os.environ.update(IDENTITY)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        text = big_file(lines)
        make_repo(root, {"big.py": text, "other.py": "x = 1\n"})
        middle = lines // 8
        exact = (f"@@@ EDIT big.py\n@@@ SEARCH\ndef function_{middle}(x):\n"
                 f"    return x + {middle}\n@@@ REPLACE\ndef function_{middle}(x):\n"
                 f"    return x - {middle}\n@@@ END\n")
        shifted = exact.replace("\n    return", "\n        return").replace(
            "\ndef function", "\n    def function")
        print(f"big.py: {text.count(chr(10)):,} lines, {len(text.encode()):,} bytes; "
              f"median of {repeat} runs")
        for label, answer in (("exact", exact), ("indentation off", shifted)):
            prep, cycle = [], []
            for _ in range(repeat):
                start = time.perf_counter()
                prepared = prepare(root, answer)
                prep.append(time.perf_counter() - start)
                assert prepared.ok, prepared.message
                start = time.perf_counter()
                applied = apply(prepared, "bench")
                undone = undo(root)
                cycle.append(time.perf_counter() - start)
                assert applied.ok and undone.ok, (applied.message, undone.message)
            assert (root / "big.py").read_text() == text
            print(f"  {label:16} prepare {1000 * statistics.median(prep):7.1f} ms   "
                  f"apply+undo {1000 * statistics.median(cycle):7.1f} ms")


def main() -> None:
    os.environ.update(OFFLINE)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["format", "engine"])
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--show", action="store_true", help="print every answer")
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if args.what == "format":
        bench_format(args.samples, args.max_tokens, args.show)
    else:
        bench_engine(args.lines, args.repeat)


if __name__ == "__main__":
    main()
