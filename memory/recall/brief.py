"""What ``engram recall QUERY --brief`` prints for a per-prompt hook (Claude Code's
UserPromptSubmit adds it to the prompt's context): the project instructions that apply,
the pinned memories and the few most relevant fresh ones, within a token budget."""

from __future__ import annotations

from memory.recall.keeper import MAX_LIMIT, Keeper

BRIEF_TOKENS = 800  # what ``engram recall --brief`` prints at most (about 4 characters a token)


def brief(keeper: Keeper, query: str, tokens: int = BRIEF_TOKENS, limit: int = 5) -> str:
    """What a per-prompt hook adds to a prompt ('' when nothing): the project
    instructions that apply to the code the chosen memories cite, then the pinned
    memories and the few most relevant fresh ones, within about ``tokens`` tokens.
    Instructions too long for the budget are named, never cut."""
    recalled = keeper.recall(query, min(MAX_LIMIT, limit + len(keeper.pinned())))
    chosen = [m for m in recalled if m.pinned or (
        m.freshness not in ("changed", "gone") and m.score >= 0.25)]
    text, files = keeper.instructions(
        [loc for m in chosen for loc in m.locations])
    blocks: list[str] = []
    used = 0
    if text:
        cost = len(text) // 4 + 1
        if cost <= tokens // 2:
            blocks.append(text)
            used += cost
        else:
            note = (f"(project instructions {', '.join(files)}: about {cost} tokens, over "
                    "this brief's budget; they apply here: read them)")
            blocks.append(note)
            used += len(note) // 4 + 1
    lines: list[str] = []
    for memory in chosen:
        line = memory.line()
        cost = len(line) // 4 + 1
        if used + cost > tokens:
            break
        lines.append(line)
        used += cost
    if lines:
        blocks.append("engram's memory of this repository (kept facts and decisions):\n"
                      + "\n".join(lines))
    return "\n\n".join(blocks)
