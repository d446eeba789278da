"""Recorded sessions: engram's transcripts, Claude Code, Codex CLI and Aider sessions."""
