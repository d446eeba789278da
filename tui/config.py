"""The user's engram settings (theme, timeout, model aliases, ...), a small JSON file in
the config dir. Read in memory/home.py (the engine reads model aliases too); written here."""

from __future__ import annotations

import json
from typing import Any

from memory.home import config_path, load_config

__all__ = ["config_path", "load_config", "save_config"]


def save_config(**changes: Any) -> None:
    data = {**load_config(), **changes}
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
