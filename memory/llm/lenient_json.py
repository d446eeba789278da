"""Parse the JSON a model meant to write: code fences, prose around it, trailing
commas and Python literals are repaired; anything else is a ``MalformedJSON``."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class MalformedJSON(ValueError):
    """The text holds no JSON value that could be repaired."""


def _candidates(text: str) -> list[str]:
    found = [m.group(1) for m in _FENCE.finditer(text)]
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if start != -1 and end > start:
            found.append(text[start:end + 1])
    found.append(text)
    return found


def parse_json(text: str) -> Any:
    """The first JSON value in ``text`` that parses, after trivial repairs."""
    for candidate in _candidates(text.strip()):
        candidate = candidate.strip()
        for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
            try:
                return json.loads(attempt)
            except json.JSONDecodeError:
                pass
            try:  # single quotes, True/False/None
                value = ast.literal_eval(attempt)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict | list):
                return value
    raise MalformedJSON(f"no JSON found in model output: {text[:120]!r}")
