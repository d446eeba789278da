"""The edit engine: a model's answer becomes checked file changes, a git commit, and
an undo. No UI here: every step returns a result with a message.

    parsed = parse(answer)                    # blocks and malformed-block problems
    prepared = prepare(root, answer, seen)    # all blocks checked, diffs, nothing written
    applied = apply(prepared, request)        # files written, one commit with a trailer
    undone = undo(root)                       # the last engram commit reverted

Blocks may aim at ``path.py::Qual.name`` to replace a whole definition (functions.py).
``EDIT_FORMAT`` is the system prompt's explanation of the block format
(``FUNCTION_EDITS`` one more rule for models that can take it).
"""

from .blocks import has_blocks, parse
from .check import prepare
from .commit import apply, message
from .gitstate import TRAILER, snapshot
from .instructions import EDIT_FORMAT, FUNCTION_EDITS
from .results import Applied, Edit, FileChange, Parsed, Prepared, Problem, Undone
from .revert import is_engram_commit, undo

__all__ = ["EDIT_FORMAT", "FUNCTION_EDITS", "TRAILER", "Applied", "Edit", "FileChange",
           "Parsed", "Prepared", "Problem", "Undone", "apply", "has_blocks",
           "is_engram_commit", "message", "parse", "prepare", "snapshot", "undo"]
