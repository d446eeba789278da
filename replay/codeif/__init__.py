"""CodeIF-Bench-style iterative instructions with per-turn tests."""
