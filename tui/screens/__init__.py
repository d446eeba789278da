"""engram's screens, one per module."""

from tui.screens._confirm import ConfirmScreen
from tui.screens._consent import ConsentScreen
from tui.screens._diff import DiffScreen
from tui.screens._edit import EditScreen
from tui.screens._help import HelpScreen
from tui.screens._sessions import SessionPicker

__all__ = ["ConfirmScreen", "ConsentScreen", "DiffScreen", "EditScreen", "HelpScreen",
           "SessionPicker"]
