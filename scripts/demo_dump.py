"""The demo through ``engram replay``'s command line, answered by the tests' context-reading
scripted model, dumped with what changes from run to run left out (wall times, temp
folders, the checkout's path) and key order ignored; and two dumps compared. What a
restructuring of replay is checked with: the same pairs, transcripts and summary.

    cd CHECKOUT && python scripts/demo_dump.py run OUT [LIMIT]  # OUT.normalised.json beside OUT
    python scripts/demo_dump.py compare BEFORE.normalised.json AFTER.normalised.json
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

VOLATILE = {"seconds", "started", "finished", "latency_ms", "feed_seconds", "question_seconds"}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def run(out: Path, limit: str) -> int:
    sys.path.insert(0, str(Path.cwd()))
    from replay.cli.command import main
    from replay.locoeval import DEMO
    from replay.locoeval.outline import load_outlines
    from tests.conftest import SCRIPT, _register_scripted
    from tests.replay.reader import ContextReader

    _register_scripted()
    SCRIPT.default = ContextReader(load_outlines(DEMO / "outlines"), DEMO / "inventory")
    SCRIPT.count_prompt, SCRIPT.piece_words = True, 512
    code = main(["demo", "--backends", "full,empty,rag,oracle", "--model", "scripted/reader",
                 "--max-tokens", "128", "--window", "0", "--limit", limit, "--out", str(out)])
    dump = {"code": code,
            "results": _strip(json.loads((out / "results.json").read_text())),
            "pairs": sorted((_strip(json.loads(line)) for line in
                             (out / "pairs.jsonl").read_text().splitlines()),
                            key=lambda r: (r["source"], r["backend"])),
            "conversations": {p.name: [_strip(json.loads(line))
                                       for line in p.read_text().splitlines()]
                              for p in sorted((out / "conversations").iterdir())}}
    text = json.dumps(dump, sort_keys=True, indent=1).replace(str(Path.cwd()), "CHECKOUT")
    text = re.sub(r"/tmp/engram-replay-[a-z0-9_]+", "/tmp/engram-replay-X", text)
    (out.parent / f"{out.name}.normalised.json").write_text(text)
    print("exit", code, "sha256", hashlib.sha256(text.encode()).hexdigest())
    return code


def differences(before: Any, after: Any, path: str = "") -> list[str]:
    if type(before) is not type(after):
        return [f"{path}: {before!r:.80} -> {after!r:.80}"]
    if isinstance(before, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            if key not in before:
                found.append(f"{path}/{key}: only after ({after[key]!r:.80})")
            elif key not in after:
                found.append(f"{path}/{key}: only before ({before[key]!r:.80})")
            else:
                found += differences(before[key], after[key], f"{path}/{key}")
        return found
    if isinstance(before, list):
        found = [f"{path}: {len(before)} -> {len(after)} items"] if len(before) != len(after) \
            else []
        for n, (b, a) in enumerate(zip(before, after, strict=False)):
            found += differences(b, a, f"{path}[{n}]")
        return found
    return [] if before == after else [f"{path}: {before!r:.80} -> {after!r:.80}"]


def main() -> int:
    if sys.argv[1:2] == ["run"]:
        return run(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "16")
    if sys.argv[1:2] == ["compare"]:
        found = differences(json.loads(Path(sys.argv[2]).read_text()),
                            json.loads(Path(sys.argv[3]).read_text()))
        print("\n".join(found) or "the same")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
