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
