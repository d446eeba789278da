"""Agentic sessions replayed with their tools (reads from the record, tests in the jail)."""
