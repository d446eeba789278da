"""LoCoMo (Maharana et al., ACL 2024): long two-person conversations over many sessions, and
questions about them, scored as LoCoMo's own evaluation scores them (``replay.locomo``)."""
