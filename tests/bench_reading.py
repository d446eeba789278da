"""What ``cards`` pays to read long developer lines (not collected by pytest).

    .venv/bin/python -m tests.bench_reading [--sizes 4000,16000,32000]

For each size, lines a developer pastes: one long word, a long snake_case run after a
name, a long code span, a long parameter list; printed: the seconds of
``said_statements`` (statements as said) and of ``Reader.read_all`` (names, values and
aspects, the real MiniLM) on each. Both should grow with the line, not with its square.
"""

from __future__ import annotations

import argparse
import time

from memory.backends.cards.reading import Lexicon, Reader
from memory.backends.cards.said import said_statements
from memory.index.embed import get_embedder, whole_words


def lines(size: int) -> dict[str, str]:
    return {"one word": "a" * size,
            "snake_case run": "cart_total " + "x_" * (size // 2),
            "code span": "`" + "a" * size,
            "parameter list": "cart_total(" + "a, " * (size // 3) + ")"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4000,16000,32000")
    args = parser.parse_args()
    lexicon = Lexicon(frozenset({"clean_code"}), ("shop/text.py",),
                      {"clean_code": "shop/text.py"}, frozenset({"cart_total"}),
                      words=whole_words())
    reader = Reader(get_embedder())
    reader.read_all(["warm"], lexicon)
    for size in (int(s) for s in args.sizes.split(",")):
        for kind, text in lines(size).items():
            start = time.perf_counter()
            said = said_statements(text)
            read_at = time.perf_counter()
            reader.read_all([s.text for s in said] or [text], lexicon)
            done = time.perf_counter()
            print(f"{size:>6} chars, {kind:15}: said {read_at - start:6.2f} s, "
                  f"read {done - read_at:6.2f} s", flush=True)


if __name__ == "__main__":
    main()
