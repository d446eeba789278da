"""LoCoEval-style outlines: the outline format, its builder, mock users, judge, oracle.

``DEMO`` is the bundled benchmark: outlines (and question and chain files) on a small
repository, ``demo/inventory``.
"""

from pathlib import Path

DEMO = Path(__file__).with_name("demo")
