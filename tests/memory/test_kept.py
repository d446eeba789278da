"""The kept facts of ``cards`` (shared memory): one LanceDB table that processes write at
once without losing a row."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from memory.backends.cards.kept import Kept, KeptStore

ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import sys, numpy as np
from pathlib import Path
from memory.backends.cards.kept import Kept, KeptStore
store = KeptStore(Path(sys.argv[1]), 8)
name = sys.argv[2]
for i in range(15):
    store.add(Kept(f"{name}{i:02d}", f"fact {i} of {name}", source="chat"), np.ones(8))
    if i % 5 == 4:
        store.set(f"{name}{i - 1:02d}", pinned=True)
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name],
                              cwd=str(ROOT), env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin"},
                              stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    rows, vectors = KeptStore(tmp_path, 8).load()
    assert sorted(r.id for r in rows) == sorted(f"{n}{i:02d}" for n in "ab" for i in range(15))
    assert {r.id for r in rows if r.pinned} == {f"{n}{i:02d}" for n in "ab" for i in (3, 8, 13)}
    assert all(v.shape == (8,) for v in vectors.values())


def test_a_reader_sees_another_writers_rows_and_a_kept_id_is_kept_once(tmp_path):
    reader, writer = KeptStore(tmp_path, 4), KeptStore(tmp_path, 4)
    assert reader.load() == ([], {})
    assert not reader.changed()
    assert writer.add(Kept("k1", "the first fact"), np.ones(4))
    assert not writer.add(Kept("k1", "again"), np.ones(4))
    assert reader.changed()
    rows, _ = reader.load()
    assert [r.text for r in rows] == ["the first fact"] and not reader.changed()
    assert not writer.set("nope", pinned=True)
