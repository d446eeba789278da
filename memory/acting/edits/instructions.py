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

# One worked exchange to put before the real question (as a user and an assistant
# message). Measured with SmolLM2-135M (scripts/bench_edits.py format): with the rules
# alone it writes no edit marker at all; after this example it starts its answers with
# an EDIT line, though it still leaves out SEARCH/REPLACE (the parser says so).
EXAMPLE_QUESTION = 'File app.py:\n```\ndef greet():\n    return "hi"\n```\n\nMake greet say hello.'
EXAMPLE_ANSWER = """\
@@@ EDIT app.py
@@@ SEARCH
    return "hi"
@@@ REPLACE
    return "hello"
@@@ END"""


def example_messages() -> list[dict[str, str]]:
    """The worked example as chat messages (a fresh list each call)."""
    return [{"role": "user", "content": EXAMPLE_QUESTION},
            {"role": "assistant", "content": EXAMPLE_ANSWER}]
