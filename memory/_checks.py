"""Explicit field checks for data read back from disk (transcript records).

Each check returns the value with its promised type or raises ``RecordError`` naming
the field; nothing here coerces a wrong type into a right one (``"3"`` is not an index).
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_DEPTH = 32  # nesting of lists and objects a record may hold
MAX_TIMESTAMP = 2.0**33  # seconds since the epoch (year 2242): beyond it, not a time
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class RecordError(ValueError):
    """A record (or one of its fields) that does not have the shape engram writes."""


def valid_session_id(value: str) -> bool:
    """Whether ``value`` can name a session file: letters, digits, ``_.-``, starting with a
    letter or digit (so never ``..``, never a path)."""
    return bool(SESSION_ID.fullmatch(value))


def check_session_id(value: str) -> str:
    if not valid_session_id(value):
        raise RecordError(f"{value[:80]!r} is not a session id (letters, digits, '_', '.', "
                          "'-'; starting with a letter or digit; at most 128)")
    return value


def control_character(value: str) -> str:
    """The first NUL or other control character in ``value`` as ``U+XXXX`` ("" if none):
    no file name in a repository holds one, and the OS refuses NUL with a bare ValueError."""
    found = CONTROL.search(value)
    return f"U+{ord(found.group()):04X}" if found else ""


def text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise RecordError(_wrong(key, "a string", value))
    return value


def optional_text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise RecordError(_wrong(key, "a string or null", value))
    return value


def integer(data: dict[str, Any], key: str, default: int | None = None, *,
            minimum: int = 0, maximum: int = 2**31) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(_wrong(key, "an integer", value))
    if not minimum <= value <= maximum:
        raise RecordError(f"{key!r} is {value}, outside {minimum}..{maximum}")
    return value


def optional_integer(data: dict[str, Any], key: str) -> int | None:
    return None if data.get(key) is None else integer(data, key)


def number(data: dict[str, Any], key: str, default: float | None = None, *,
           maximum: float = 2.0**53) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(_wrong(key, "a number", value))
    if not math.isfinite(value) or not 0 <= value <= maximum:
        raise RecordError(f"{key!r} is {value}, outside 0..{maximum:g}")
    return float(value)


def timestamp(data: dict[str, Any], key: str, default: float | None = None) -> float:
    return number(data, key, default, maximum=MAX_TIMESTAMP)


def obj(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(_wrong(key, "an object", value))
    return value


def strings(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(_wrong(key, "a list of strings", value))
    return value


def objects(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RecordError(_wrong(key, "a list of objects", value))
    return value


def shallow(value: Any, limit: int = MAX_DEPTH) -> None:
    """``RecordError`` if ``value`` nests lists/objects deeper than ``limit`` (iterative:
    a deep value cannot exhaust the stack here)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise RecordError(f"nested deeper than {limit} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _wrong(key: str, expected: str, value: Any) -> str:
    if value is None:
        return f"{key!r} is missing (expected {expected})"
    return f"{key!r} must be {expected}, not {type(value).__name__}"
