"""The embedded SmolLM2 through the edit engine: whatever it writes, the engine either
applies it as one commit that undo takes back byte for byte, or refuses it with a
message and writes nothing."""

from __future__ import annotations

import pytest

from memory.acting.edits import EDIT_FORMAT, apply, parse, prepare, undo
from memory.acting.edits.instructions import example_messages

from .test_edits_support import CALC, identity, picture, repo

pytestmark = pytest.mark.slow


def test_a_real_small_model_answer_is_applied_or_refused_cleanly(tmp_path, monkeypatch):
    from memory.llm.local import load_local_model

    identity(monkeypatch)
    root = repo(tmp_path)
    (root / "notes.txt").write_text("my uncommitted notes\n")
    before = picture(root)
    messages = [{"role": "system", "content": "You are a coding assistant.\n\n" + EDIT_FORMAT},
                *example_messages(),
                {"role": "user", "content": f"File app/calc.py:\n```\n{CALC}```\n\n"
                                            "Fix add: it must return a + b."}]
    answer = load_local_model("smollm2").generate(messages, {"max_tokens": 120}).text
    parsed = parse(answer)
    prepared = prepare(root, answer)
    assert prepared.message
    if not prepared.ok:
        assert prepared.changes == [] and picture(root) == before
        assert parsed.problems or not parsed.edits or prepared.problems
        return
    applied = apply(prepared, "Fix add")
    assert applied.ok, applied.message
    assert (root / "notes.txt").read_text() == "my uncommitted notes\n"
    assert undo(root).ok and picture(root) == before
