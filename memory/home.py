"""Where engram keeps its data: per repository, under the platform data dir."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path


def engram_home(override: Path | str | None = None) -> Path:
    """``--data-dir``, else ``$ENGRAM_HOME``, else the platform's user data dir."""
    if override:
        return Path(override).expanduser()
    if os.environ.get("ENGRAM_HOME"):
        return Path(os.environ["ENGRAM_HOME"]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("engram"))


def repo_home(repo_root: Path, override: Path | str | None = None) -> Path:
    """The folder holding ``index.lance/`` and ``sessions/`` for one repository."""
    root = repo_root.resolve()
    digest = hashlib.sha1(str(root).encode()).hexdigest()[:12]
    name = re.sub(r"[^\w.-]+", "_", root.name) or "repo"
    return engram_home(override) / "repos" / f"{name}-{digest}"


def config_path() -> Path:
    """The user's settings file: ``$ENGRAM_CONFIG``, else ``config.json`` in ``$ENGRAM_HOME``,
    else in the platform's user config dir."""
    if os.environ.get("ENGRAM_CONFIG"):
        return Path(os.environ["ENGRAM_CONFIG"])
    if os.environ.get("ENGRAM_HOME"):  # everything engram keeps, in one place
        return Path(os.environ["ENGRAM_HOME"]).expanduser() / "config.json"
    from platformdirs import user_config_dir

    return Path(user_config_dir("engram")) / "config.json"


def load_config() -> dict[str, object]:
    """The user's settings (an empty dict when the file is missing or not a JSON object)."""
    import json

    try:
        data = json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cache_dir() -> Path:
    """What engram learns and may forget (structured modes of served models):
    ``cache/`` in ``$ENGRAM_HOME``, else the platform's user cache dir."""
    if os.environ.get("ENGRAM_HOME"):
        return Path(os.environ["ENGRAM_HOME"]).expanduser() / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("engram"))
