"""The edit format as the system prompt explains it: short enough for a 135M model."""

EDIT_FORMAT = """\
To change a file, write an edit block:

@@@ EDIT path/to/file.py
@@@ SEARCH
lines copied exactly from the file
@@@ REPLACE
the new lines
@@@ END

Rules:
- SEARCH must match the file exactly and only once: copy a few whole lines.
- To create a file, leave SEARCH empty.
- To delete lines, leave REPLACE empty.
- Use one block per change. Paths are relative to the repository.
"""

# For models that can take one more rule (not needed by small ones).
FUNCTION_EDITS = """\
- To replace a whole Python function, method or class, write
  `@@@ EDIT path/to/file.py::Class.method`, no SEARCH part, and the complete new
  definition as REPLACE.
"""
