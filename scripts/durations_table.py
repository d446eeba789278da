"""tests/durations.json from a whole run's ``pytest --durations=N`` output.

    .venv/bin/pytest -n 2 -q -p no:cacheprovider --durations=80 > suite.log
    .venv/bin/python scripts/durations_table.py suite.log [--note "at abc1234, quiet"]

tests/conftest.py hands the xdist workers their work longest first by these seconds (setup +
call + teardown of each test, an xdist group's ``@group`` suffix dropped); a test not in the
table gets a rough cost by its marks. Rerun it after a change that moves a long test.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

LINE = re.compile(r"^(\d+(?:\.\d+)?)s\s+(setup|call|teardown)\s+(.+)$")
TABLE = Path(__file__).parents[1] / "tests" / "durations.json"


def seconds(log: str) -> dict[str, float]:
    rows: dict[str, float] = {}
    for line in log.splitlines():
        if match := LINE.match(line.strip()):
            node = match.group(3).split("@")[0]
            rows[node] = round(rows.get(node, 0.0) + float(match.group(1)), 1)
    return dict(sorted(rows.items(), key=lambda row: -row[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--note", default="", help="which run: commit, machine")
    args = parser.parse_args()
    rows = seconds(args.log.read_text())
    if not rows:
        raise SystemExit(f"no --durations lines in {args.log}")
    about = ("seconds per test (setup + call) of a whole run's --durations; "
             "tests/conftest.py orders the xdist work by it, the longest first"
             + (f" ({args.note})" if args.note else ""))
    TABLE.write_text(json.dumps({"_about": about, "seconds": rows}, indent=1) + "\n")
    print(f"{len(rows)} tests -> {TABLE}")


if __name__ == "__main__":
    main()
