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


AGENTIC_COLUMNS = (("tests pass ↑", "tests_pass", 2), ("turn tok ↓", "prompt_tokens_in_turns", 0),
                   ("step tok", "step_prompt_tokens", 0), ("answer tok", "answer_prompt_tokens", 0),
                   ("steps", "steps", 1), ("record", "record", 0), ("live", "live", 0),
                   ("jail", "jail", 0), ("refused", "refused", 0))
AGENTIC_LEGEND = (
    "Agentic sessions replayed with their tools: tests pass: share of pairs whose final "
    "tests pass in the sandbox (the replayed answers' edits applied); turn tok: prompt "
    "tokens sent within a turn, per turn: the tool loop's steps (step tok) and the answer "
    "(answer tok); steps: tool-loop steps per turn; record / live: the replayed model's "
    "reads answered from the recorded session / by the real tool on the repository at the "
    "session's commit (asked something new, or a file the replay edited); jail: test "
    "commands run again in the jail; refused: other commands not in the record (not run).")
