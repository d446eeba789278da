"""The OS jail: bubblewrap namespaces around a command (``bwrap``), the audit hook
installed as ``sitecustomize`` where Python runs in a sandbox (``_guard.py``, a file
copied, never imported: ``GUARD`` is its path), and ``tree.TreeJail``, which runs a
command on a copy of a working tree (the ``run`` tool of memory/acting/tools/). replay's
sandbox uses the same jail."""

from pathlib import Path

GUARD = Path(__file__).with_name("_guard.py")
