"""What the last index refresh saw: one small JSON file beside the LanceDB tables.

A refresh that finds the same stamp (a digest of every file signature, the index
config and the embedder) has nothing to do, and answers without opening LanceDB or
loading a model. The file is removed before a refresh changes the tables and written
after it completes, so a crash in between only costs the shortcut once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

NAME = "engram-files.json"  # inside the store folder: deleting the index deletes it


def stamp(signatures: dict[str, str], settings: Iterable[Any]) -> str:
    """A digest of ``signatures`` (path -> content signature) and ``settings``."""
    digest = hashlib.sha1(repr(tuple(settings)).encode())
    for path in sorted(signatures):
        digest.update(f"{path}\0{signatures[path]}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def read(path: Path, wanted: str) -> dict[str, Any] | None:
    """The manifest at ``path`` if its stamp is ``wanted``, else None."""
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("stamp") != wanted:
        return None
    return manifest


def write(path: Path, value: str, **facts: Any) -> None:
    """Atomically (concurrent refreshes of one index write the same facts)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"stamp": value, **facts}))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only data dir: no shortcut next time


def remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
