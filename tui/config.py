"""The user's engram settings (theme, ...), a small JSON file in the config dir."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def config_path() -> Path:
    if os.environ.get("ENGRAM_CONFIG"):
        return Path(os.environ["ENGRAM_CONFIG"])
    if os.environ.get("ENGRAM_HOME"):  # everything engram keeps, in one place
        return Path(os.environ["ENGRAM_HOME"]).expanduser() / "config.json"
    from platformdirs import user_config_dir

    return Path(user_config_dir("engram")) / "config.json"


def load_config() -> dict[str, Any]:
    try:
        data = json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_config(**changes: Any) -> None:
    data = {**load_config(), **changes}
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
