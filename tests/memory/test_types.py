from __future__ import annotations

import pytest

from memory.types import ContextPack, Section, Turn, Usage


def test_to_messages_orders_system_context_history_query():
    pack = ContextPack("now?", [
        Section("system", "system", "be brief"),
        Section("history", "turn:0", "q0", role="user"),
        Section("history", "turn:0", "a0", role="assistant"),
        Section("repo", "a.py::f", "def f(): ..."),
        Section("memory", "m1", "user prefers tabs"),
    ])
    messages = pack.to_messages()
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    system = messages[0]["content"]
    assert system.startswith("be brief")
    assert system.index("user prefers tabs") < system.index("def f(): ...")
    assert messages[-1]["content"] == "now?"


def test_usage_split_by_purpose_and_deltas():
    ledger = Usage()
    ledger.add("answer", 100, 20, 0.5)
    before = ledger.copy()
    ledger.add("memory", 30, 5)
    ledger.add("answer", 10, 1)
    delta = ledger.since(before)
    assert delta.get("memory").tokens == 35
    assert delta.get("answer").tokens == 11 and delta.get("answer").calls == 1
    assert ledger.tokens == 166
    assert Usage.from_dict(ledger.to_dict()).to_dict() == ledger.to_dict()
    with pytest.raises(ValueError, match="unknown usage purpose"):
        ledger.add("fun", 1, 1)


def test_turn_record_round_trip():
    turn = Turn(3, "q", "a", "rag", "m", error="boom")
    assert Turn.from_record(turn.to_record()).to_record() == turn.to_record()
