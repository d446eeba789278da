"""engram's screens, one per module."""

from tui.screens._help import HelpScreen
from tui.screens._sessions import SessionPicker

__all__ = ["HelpScreen", "SessionPicker"]
