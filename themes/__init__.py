"""engram's Textual themes, registered by the app; styles in ``engram.tcss`` use
their variables, so every widget follows the active theme."""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

STYLESHEET = Path(__file__).with_name("engram.tcss")

DARK = Theme(
    name="engram-dark",
    primary="#7aa2f7",
    secondary="#bb9af7",
    accent="#e0af68",
    warning="#e0af68",
    error="#f7768e",
    success="#9ece6a",
    foreground="#c0caf5",
    background="#1a1b26",
    surface="#1f2335",
    panel="#24283b",
    dark=True,
)

LIGHT = Theme(
    name="engram-light",
    primary="#2e59c6",
    secondary="#7847bd",
    accent="#b15c00",
    warning="#b15c00",
    error="#c4304a",
    success="#3f7d20",
    foreground="#1f2330",
    background="#f6f7fb",
    surface="#eceef5",
    panel="#e1e4ee",
    dark=False,
)

THEMES = (DARK, LIGHT)
DEFAULT_THEME = DARK.name
