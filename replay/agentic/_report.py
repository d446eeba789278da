"""Per backend, the agentic pairs' figures: whether the final tests pass, prompt tokens
within turns (the tool loop's steps and the answer, per turn), and how the replayed
model's tool calls were answered (from the record, live, in the jail, refused)."""

from __future__ import annotations

from typing import Any


def agentic_rows(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{backend: {...}}`` over the pairs that replayed an agentic session."""
    rows: dict[str, dict[str, Any]] = {}
    for backend in dict.fromkeys(p["backend"] for p in pairs):
        mine = [p for p in pairs if p["backend"] == backend and p.get("kind") == "agentic"]
        if not mine:
            continue
        done = [p["agentic"] for p in mine if p.get("agentic")]
        turns = sum(len(a["turns"]) for a in done)
        row: dict[str, Any] = {"pairs": len(mine),
                               "errors": sum(1 for p in mine if p.get("error"))}
        if done:
            row["tests_pass"] = sum(1.0 for a in done if a["tests_pass"]) / len(done)
        if turns:
            for key in ("step_prompt_tokens", "answer_prompt_tokens", "prompt_tokens_in_turns",
                        "steps"):
                row[key] = sum(a[key] for a in done) / turns
        for way in ("record", "live", "jail", "refused"):
            row[way] = sum(a["answered"].get(way, 0) for a in done)
        rows[backend] = row
    return rows


AGENTIC_COLUMNS = (("tests pass ↑", "tests_pass", 2), ("in-turn prompt tok/turn ↓",
                   "prompt_tokens_in_turns", 0), ("steps tok/turn", "step_prompt_tokens", 0),
                   ("answer tok/turn", "answer_prompt_tokens", 0), ("steps/turn", "steps", 1),
                   ("from record", "record", 0), ("live reads", "live", 0),
                   ("jail runs", "jail", 0), ("refused", "refused", 0))
AGENTIC_LEGEND = (
    "Agentic sessions replayed with their tools: tests pass: share of pairs whose final "
    "tests pass in the sandbox (the replayed answers' edits applied); in-turn prompt "
    "tok/turn: prompt tokens the tool loop's steps and the answer sent, per turn (steps "
    "and answer apart); from record / live reads: the replayed model's reads answered "
    "from the recorded session / by the real tool on the repository at the session's "
    "commit (asked something new); jail runs: test commands run again in the jail; "
    "refused: other commands not in the record (not run).")
