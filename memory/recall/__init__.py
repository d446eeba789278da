"""A repository's memories read outside a live session: the kept facts for the MCP server
and the per-prompt hook (``keeper``), and every backend's store with its history for
``engram memories`` (``memories``; in-process memories rebuilt from a transcript by
``_rebuilt``).
"""
