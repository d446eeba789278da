"""The error of an ``engram`` command that the user can fix."""

from __future__ import annotations


class CLIError(Exception):
    """A problem the user can fix; printed without a traceback."""
