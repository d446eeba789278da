"""Where a run's files go: a local folder or an object-store URI, through fsspec.

Only the driver writes here (``pairs.jsonl``, ``results.json``, charts, and the
transcripts its workers hand back), so a cluster's workers need no access to it.
A local folder keeps today's behaviour: transcripts written in place, record by record,
and ``pairs.jsonl`` appended with an fsync per line. An object store has no append:
``pairs.jsonl`` is rewritten whole (it is one short line per finished pair).
"""

from __future__ import annotations

import json
import os
import posixpath
from pathlib import Path
from typing import Any

from memory.redact import redact_obj
from memory.sessions.common import dict_row

PAIRS = "pairs.jsonl"


class OutputError(ValueError):
    """An output location that cannot be used."""


def _is_local(fs: Any) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in ("file", "local")


class Output:
    """A run folder, local or remote (any fsspec URL: ``s3://bucket/run``, ``memory://x``)."""

    def __init__(self, location: str | Path) -> None:
        import fsspec

        self.location = str(location)
        try:
            self.fs, self.root = fsspec.core.url_to_fs(self.location)
        except (ImportError, ValueError) as exc:  # unknown protocol, missing s3fs...
            raise OutputError(f"output location {self.location}: {exc}") from exc
        self.root = self.root.rstrip("/") or "/"

    @property
    def local(self) -> Path | None:
        """The folder on this machine, or None for an object store."""
        return Path(self.root) if _is_local(self.fs) else None

    def path(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def url(self, *parts: str) -> str:
        """What to print for a file of the run."""
        if self.local is not None:
            return str(self.local.joinpath(*parts))
        return self.fs.unstrip_protocol(self.path(*parts))

    def makedirs(self, *parts: str) -> None:
        self.fs.makedirs(self.path(*parts), exist_ok=True)

    def exists(self, *parts: str) -> bool:
        return bool(self.fs.exists(self.path(*parts)))

    def read_bytes(self, *parts: str) -> bytes | None:
        try:
            with self.fs.open(self.path(*parts), "rb") as fh:
                return bytes(fh.read())
        except FileNotFoundError:
            return None

    def read_text(self, *parts: str) -> str | None:
        data = self.read_bytes(*parts)
        return None if data is None else data.decode("utf-8")

    def write_bytes(self, data: bytes, *parts: str) -> str:
        self.fs.makedirs(posixpath.dirname(self.path(*parts)), exist_ok=True)
        with self.fs.open(self.path(*parts), "wb") as fh:
            fh.write(data)
        return self.url(*parts)

    def write_text(self, text: str, *parts: str) -> str:
        return self.write_bytes(text.encode("utf-8"), *parts)

    def remove(self, *parts: str) -> None:
        if self.exists(*parts):
            self.fs.rm(self.path(*parts))

    def listdir(self, *parts: str) -> list[str]:
        if not self.exists(*parts):
            return []
        return sorted(posixpath.basename(p.rstrip("/"))
                      for p in self.fs.ls(self.path(*parts), detail=False))

    def append_line(self, line: str, *parts: str) -> None:
        """One line at the end of a file: appended and fsync'd locally, rewritten whole on
        an object store (which has no append). A torn last line is ended first."""
        local = self.local
        if local is not None:
            path = local.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            torn = False  # a line cut by a killed writer stays its own (skipped) line
            if path.exists() and path.stat().st_size:
                with path.open("rb") as fh:
                    fh.seek(-1, os.SEEK_END)
                    torn = fh.read(1) != b"\n"
            with path.open("a", encoding="utf-8") as fh:
                fh.write(("\n" if torn else "") + line + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            return
        before = self.read_text(*parts) or ""
        if before and not before.endswith("\n"):
            before += "\n"  # a torn last line stays its own (skipped) line
        self.write_text(before + line + "\n", *parts)


class PairLog:
    """``pairs.jsonl``: one line per finished (source, backend) pair, what ``--resume``
    reads. A line that does not parse (a driver killed mid-write) is skipped: that pair
    runs again."""

    def __init__(self, output: Output) -> None:
        self.output = output

    def rows(self) -> list[dict[str, Any]]:
        text = self.output.read_text(PAIRS) or ""
        return [row for line in text.splitlines() if (row := dict_row(line)) is not None]

    def finished(self) -> set[tuple[str, str]]:
        return {(str(r.get("source")), str(r.get("backend"))) for r in self.rows()
                if not r.get("error")}

    def latest(self) -> list[dict[str, Any]]:
        """The latest row of each pair on record."""
        last: dict[tuple[str, str], dict[str, Any]] = {}
        for row in self.rows():
            last[(str(row.get("source")), str(row.get("backend")))] = row
        return list(last.values())

    def append(self, row: dict[str, Any]) -> None:
        self.output.append_line(json.dumps(redact_obj(row)), PAIRS)

    def clear(self) -> None:
        self.output.remove(PAIRS)
