"""engram's engine: everything a context-management agent is. No UI, no scoring."""

__version__ = "0.1.0"
