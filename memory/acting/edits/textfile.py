"""A file's bytes as lines of text, and back, keeping what the model never sees.

Lines keep their own ending (``\\n``, ``\\r\\n``, or none on a last line without one);
a UTF-8 byte-order mark is set aside and put back. Binary (a NUL byte) and text that is
not UTF-8 are refused, as are files over the size limit.
"""

from __future__ import annotations

from dataclasses import dataclass

BOM = "\ufeff"
MAX_FILE_BYTES = 1_000_000


class NotText(ValueError):
    """Content the edit engine does not edit (binary, not UTF-8, too large)."""


@dataclass
class TextLines:
    lines: list[str]  # each with its line ending
    bom: bool = False

    @property
    def newline(self) -> str:
        """The file's usual line ending (``\\n`` for an empty or one-line file)."""
        crlf = sum(1 for line in self.lines if line.endswith("\r\n"))
        lf = sum(1 for line in self.lines if line.endswith("\n")) - crlf
        return "\r\n" if crlf > lf else "\n"

    def encode(self) -> bytes:
        return ((BOM if self.bom else "") + "".join(self.lines)).encode("utf-8")


def check_size(data: bytes, limit: int = MAX_FILE_BYTES) -> None:
    if len(data) > limit:
        raise NotText(f"{len(data):,} bytes, over the {limit:,}-byte limit for edits")


def decode(data: bytes, limit: int = MAX_FILE_BYTES) -> TextLines:
    """``data`` as lines, or ``NotText`` saying why not."""
    check_size(data, limit)
    if b"\0" in data:
        raise NotText("a binary file (it holds NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(f"not UTF-8 text (byte {exc.start})") from exc
    bom = text.startswith(BOM)
    return TextLines(split_lines(text[1:] if bom else text), bom)


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` (only there: form feeds and lone CRs stay inside)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    return [*out, lines[-1]] if lines[-1] else out


def content(line: str) -> str:
    """A line without its ending."""
    if line.endswith("\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith("\n") else line
