"""Edit blocks shown as Markdown (tui/diffview.py): each run of them in a fence longer
than any fence inside it, so a block holding a docstring's ``` examples stays one block."""

from __future__ import annotations

from memory.fences import blocks
from tui.diffview import fence_edit_blocks

EDIT = '''Here is the change.

@@@ EDIT app/stats.py
@@@ SEARCH
def mean(values):
    return sum(values) / len(values)
@@@ REPLACE
def mean(values):
    """The mean.

```pycon
>>> mean([1, 2])
1.5
```
"""
    return sum(values) / len(values)
@@@ END

Done.'''


def test_a_run_of_edit_blocks_is_fenced_longer_than_the_fences_inside_it():
    shown = fence_edit_blocks(EDIT)
    (block,) = blocks(shown)
    assert block.info == "text" and block.text.startswith("@@@ EDIT app/stats.py")
    assert block.text.endswith("@@@ END") and "```pycon" in block.text
    assert shown.startswith("Here is the change.") and shown.endswith("Done.")
    plain = EDIT.replace("```pycon\n>>> mean([1, 2])\n1.5\n```\n", "")
    assert fence_edit_blocks(plain).count("```text") == 1  # none inside: the shortest fence
    assert fence_edit_blocks("```\n@@@ EDIT a.py\n```") == "```\n@@@ EDIT a.py\n```"
