"""The inspector's structured-call line: the mode that answered, refusals stepped down."""

from __future__ import annotations

from types import SimpleNamespace

from memory.llm.client import LLM, LLMConfig
from tui.inspection import structured_note, turn_notes


def test_the_note_names_the_mode_the_refusals_and_the_skips():
    llm = LLM(LLMConfig(model="scripted/t", structured="schema_object"))
    agent = SimpleNamespace(llm=llm, memory_issues=[{"turn": 1, "op": "skipped",
                                                     "backend": "mem0", "text": "no JSON"}])
    assert structured_note(agent) == ""
    llm.stats.add(calls=3, schema_object=3, refused=1, parsed=2, failed=1)
    note = structured_note(agent)
    assert note == ("structured calls this session: 3 via schema_object 3 (1 refused, "
                    "stepped down; mode now schema_object), parsed 2, failed 1, "
                    "memory updates skipped 1")
    notes = turn_notes(agent, SimpleNamespace(index=1))
    assert notes == ["⚠ skipped (mem0): no JSON", note]
