"""File-safe names of sources and pairs."""

from __future__ import annotations

import re


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80] or "source"
