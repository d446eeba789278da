"""Errors every benchmark's loader may raise."""

from __future__ import annotations


class SourceError(ValueError):
    """A source that cannot be read as any of the kinds."""
