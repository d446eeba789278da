"""``engram mcp``: engram's kept memory served over the Model Context Protocol, the
per-prompt hook ``engram recall --brief``, and their registration in Claude Code and Codex."""
