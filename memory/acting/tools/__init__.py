"""Tools the model may call within a turn, through the Agent's tool loop
(memory/acting/toolloop.py), one module per job:

- ``read`` (read_file): numbered lines of a text file inside the repository;
- ``grep``: an extended regular expression over the tracked files;
- ``listing`` (list_files): the repository's files matching a glob;
- ``search`` (search_code): the repository index's hybrid search;
- ``run``: a command or the project's tests, after the developer's consent
  (``consent``), in the jail (memory/acting/jail/) on a copy of the working tree;
- ``box``: the tools as one toolbox (``RepoTools``; ``memory.acting.toolloop.combine`` offers
  them beside a backend's memory functions);
- ``trajectory``: a turn's calls as the model sees them, kept within the window.

Each tool returns a ``ToolResult`` with a clear message on bad input, and bounds its
own output. Nothing is imported here: the tool loop reads ``trajectory`` alone.
"""
