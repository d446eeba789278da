from __future__ import annotations

import pytest

from memory.recent import Recent


def test_the_least_recently_used_goes_first():
    recent: Recent[str] = Recent(2)
    recent.put("a", "A")
    recent.put("b", "B")
    assert recent.get("a") == "A"  # a is now the most recent
    recent.put("c", "C")
    assert recent.get("b") is None and recent.get("a") == "A" and recent.get("c") == "C"
    assert len(recent) == 2
    recent.clear()
    assert len(recent) == 0 and recent.get("a") is None
    with pytest.raises(ValueError):
        Recent(0)
