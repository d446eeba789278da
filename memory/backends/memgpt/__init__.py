"""The MemGPT backend (``backend.MemGPTBackend``) and its memory tiers with the
functions that reach them (``tiers``)."""
