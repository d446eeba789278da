"""Where engram keeps its data: per repository, under the platform data dir."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from memory.settings import current


def engram_home(override: Path | str | None = None) -> Path:
    """``--data-dir``, else the settings' data dir (``$ENGRAM_HOME``), else the
    platform's user data dir."""
    if override:
        return Path(override).expanduser()
    if current().data_dir:
        return Path(current().data_dir).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("engram"))


def repo_home(repo_root: Path, override: Path | str | None = None) -> Path:
    """The folder holding ``index.lance/`` and ``sessions/`` for one repository."""
    root = repo_root.resolve()
    digest = hashlib.sha1(str(root).encode()).hexdigest()[:12]
    name = re.sub(r"[^\w.-]+", "_", root.name) or "repo"
    return engram_home(override) / "repos" / f"{name}-{digest}"


def config_path() -> Path:
    """The user's settings file (``memory.settings``): ``$ENGRAM_CONFIG``, else
    ``config.json`` in the data dir, else in the platform's user config dir."""
    return Path(current().config_path).expanduser()


def load_config() -> dict[str, object]:
    """The user's settings (an empty dict when the file is missing or not a JSON object)."""
    return current().config()


def cache_dir() -> Path:
    """What engram learns and may forget (structured modes of served models):
    ``cache/`` in ``$ENGRAM_HOME``, else the platform's user cache dir."""
    if current().data_dir:
        return Path(current().data_dir).expanduser() / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("engram"))
