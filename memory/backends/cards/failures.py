"""Failures seen in a chat: Python tracebacks (their final error line and frames) and
pytest's FAILED lines (the test and its message), in the order they appear. ``cards``
keeps each as a failure unit of its graph."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.backends.cards.rules import (
    ERROR_LINE,
    PYTEST_E,
    PYTEST_FAILED,
    TRACE_FRAME,
    TRACE_LINE,
)


def failure_line(line: str) -> bool:
    """A line of a traceback or of pytest's failure output (its frames, final error, a
    FAILED or an E line): read by ``failures``, never a statement of the developer's."""
    text = line.strip()
    return bool(TRACE_LINE.match(text) or ERROR_LINE.match(text)
                or PYTEST_FAILED.match(text) or PYTEST_E.match(line))


@dataclass
class Failure:
    """A traceback or failed test seen in the chat."""

    error: str  # the final error line
    frames: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, function)
    test: str = ""

    def text(self) -> str:
        where = "; ".join(f"{f}:{n} in {fn}" for f, n, fn in self.frames[-2:])
        test = f"test {self.test} failed: " if self.test else ""
        return f"{test}{self.error}" + (f" (at {where})" if where else "")


def failures(text: str) -> list[Failure]:
    """Tracebacks and pytest failures in ``text``, in order."""
    found: list[Failure] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("Traceback (most recent call last)"):
            block: list[str] = []
            i += 1
            while i < len(lines):
                line = lines[i]
                match = ERROR_LINE.match(line.strip()) if not line[:1].isspace() else None
                if match:
                    frames = [(f, int(n), fn) for f, n, fn in TRACE_FRAME.findall("\n".join(block))]
                    found.append(Failure(line.strip(), frames))
                    break
                block.append(line)
                i += 1
        i += 1
    for match in PYTEST_FAILED.finditer(text):
        test = f"{match.group(1)}::{match.group(2)}" if match.group(2) else match.group(1)
        error = match.group(3) or next((m.group(1) for m in PYTEST_E.finditer(text)), "failed")
        if not any(f.test == test for f in found):
            found.append(Failure(error.strip(), [], test))
    return found
