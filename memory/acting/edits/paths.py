"""A path named by the model, made safe: relative to the repository and inside it.

Refused: an empty name, control characters, absolute paths (``/x``, ``~/x``, ``C:\\x``),
backslashes, any ``..``, anything under ``.git``, a path through a symlink (inside or
out of the repository), through a nested repository, or naming something that is not a
regular file. Only plain files git can track are edited.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

from memory._checks import control_character

DRIVE = re.compile(r"^[A-Za-z]:")


class PathRefused(ValueError):
    """A path the edit engine will not write."""


def safe_relative(root: Path, raw: str) -> str:
    """``raw`` as a POSIX path relative to ``root`` (resolved), or ``PathRefused``."""
    if not raw.strip():
        raise PathRefused("no file name")
    found = control_character(raw)
    if found:
        raise PathRefused(f"the file name holds a control character ({found})")
    if raw.startswith(("/", "~")) or DRIVE.match(raw):
        raise PathRefused(f"{raw!r} is an absolute path; name files relative to the "
                          "repository")
    if "\\" in raw:
        raise PathRefused(f"{raw!r} holds a backslash; separate folders with '/'")
    parts = [p for p in PurePosixPath(raw).parts if p != "."]
    if not parts:
        raise PathRefused(f"{raw!r} names the repository itself, not a file")
    if ".." in parts:
        raise PathRefused(f"{raw!r} climbs out with '..'; files outside the repository "
                          "are not edited")
    if any(p.casefold() == ".git" for p in parts):
        raise PathRefused(f"{raw!r} is inside .git; git's own files are not edited")
    _walk(root, parts, raw)
    return "/".join(parts)


def _walk(root: Path, parts: list[str], raw: str) -> None:
    """Refuse symlinks, non-folders and nested repositories along the way."""
    here = root
    for depth, part in enumerate(parts):
        here = here / part
        last = depth == len(parts) - 1
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            return  # the rest does not exist yet: a new file
        except OSError as exc:
            raise PathRefused(f"{raw!r} cannot be read ({exc.strerror})") from exc
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(here)
            where = ("outside the repository" if not Path(target).is_relative_to(root)
                     else "inside the repository")
            raise PathRefused(f"{raw!r} goes through a symlink ({'/'.join(parts[:depth + 1])}"
                              f" points {where}); symlinks are not followed")
        if last:
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused(f"{raw!r} is not a regular file")
        elif not stat.S_ISDIR(info.st_mode):
            raise PathRefused(f"{raw!r}: {'/'.join(parts[:depth + 1])} is not a folder")
        elif (here / ".git").exists():
            raise PathRefused(f"{raw!r} is inside a nested repository "
                              f"({'/'.join(parts[:depth + 1])})")
