"""Noticing a stream that repeats itself, piece by piece.

A small model decoding a long answer can fall into a loop: the same sentence, line or
paragraph again and again until the token cap. ``RepetitionDetector`` is fed the pieces
of a stream as they arrive and says when the text has started to repeat, so the caller
can stop the generation and keep the text up to the first copy.

The text is cut into units: sentences (ended by ``.``, ``!`` or ``?`` and a space) and
lines. Fenced code blocks are one unit each, so a block whose lines repeat (``}``,
blank lines, ``pass``) is never taken for a loop; only the same whole block again is.
A unit is compared by its words, without list markers or numbering. Two rules:

- **count**: a long line (at least ``long_words`` words; a line as far as it has been
  read, so a paragraph counts by its first sentences) seen ``times`` times;
- **cycle**: the last units are one block of up to ``max_period`` units repeated
  ``times`` times in a row, the copies together at least ``cycle_chars`` characters
  (two sentences said over and over; short units too, once they add up).

A run of text with no unit boundary at all is checked for a repeating tail once it is
long. Work per piece is a scan of the new characters for boundaries (a regular
expression; the runs between them are taken whole); per unit a dict update and, for
each period up to ``max_period``, a walk back over the units that repeat (a few, as a
loop is stopped at its third copy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FENCE = "```"
_LIST_MARKER = re.compile(r"^(?:[-*+>•]|\d{1,3}[.)]|#{1,6})\s+")
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a unit needs a letter or digit to count
_ENDS = (".", "!", "?")  # a sentence's end, before a space or tab
_BOUNDARY = re.compile(r"\n|[.!?][ \t]")


@dataclass(frozen=True)
class Repetition:
    """What repeated: a unit's text, how many times it was seen, the rule that fired
    (``count`` or ``cycle``) and ``keep``: the length of the text worth keeping (up to
    the end of the first copy, or the start of the line of the second)."""

    unit: str
    times: int
    rule: str
    keep: int

    def as_meta(self) -> dict[str, object]:
        return {"reason": "repetition", "rule": self.rule, "times": self.times,
                "repeated": self.unit[:200], "kept_chars": self.keep}


@dataclass
class _Unit:
    key: str
    start: int  # offset of the unit in the whole text
    end: int


@dataclass
class RepetitionDetector:
    """Feed pieces with ``feed``; it returns a ``Repetition`` once the text loops (and
    keeps returning it). ``text`` is everything fed so far."""

    times: int = 3
    long_words: int = 6
    max_period: int = 8
    cycle_chars: int = 120
    tail_after: int = 400  # an unbroken run longer than this is checked for a periodic tail
    found: Repetition | None = None
    text: str = ""
    _buffer: str = ""  # the unit being read
    _line: str = ""  # the line being read
    _line_begin: int = 0  # where it began
    _line_keys: list[str] = field(default_factory=list)  # its units so far
    _in_code: bool = False
    _code_start: int = 0
    _units: list[_Unit] = field(default_factory=list)
    _seen: dict[str, list[int]] = field(default_factory=dict)  # key -> where it began
    _tail_checked: int = 0

    def __post_init__(self) -> None:
        if self.times < 2:
            raise ValueError("a repetition needs times >= 2")

    def feed(self, piece: str) -> Repetition | None:
        if self.found is not None or not piece:
            return self.found
        base = len(self.text)
        self.text += piece
        pos = 0
        while pos < len(piece):  # the runs between boundaries in bulk, each boundary
            cut = self._boundary(piece, pos)
            run = piece[pos:len(piece) if cut < 0 else cut]
            self._line += run
            if not self._in_code:
                self._buffer += run
            if cut < 0:
                break
            if self._step(piece[cut], base + cut + 1):
                return self.found
            pos = cut + 1
        if (not self._in_code and len(self._buffer) > self.tail_after
                and len(self._buffer) - self._tail_checked >= 64):
            self._tail_checked = len(self._buffer)
            self._check_tail()
        return self.found

    def _boundary(self, piece: str, pos: int) -> int:
        """Where in ``piece``, from ``pos``, the next character ``_step`` must see is (a
        line break; outside code also a space or tab after ``.``, ``!`` or ``?``), -1
        when none: every other character only extends the line and the unit."""
        if self._in_code:
            return piece.find("\n", pos)
        if pos == 0 and piece[0] in " \t" and self._buffer[-1:] in _ENDS:
            return 0
        match = _BOUNDARY.search(piece, pos)
        if match is None:
            return -1
        return match.start() if match.group() == "\n" else match.start() + 1

    def finish(self) -> Repetition | None:
        """The stream ended: its last line counts too (a loop's last copy often ends
        the answer without a line break)."""
        return self.feed("\n")

    # -- cutting the text into units -------------------------------------------------
    def _step(self, char: str, end: int) -> bool:
        """One character more, the text now ``end`` long; True once a repetition is found."""
        if char == "\n":
            line, self._line = self._line, ""
            if line.strip().startswith(FENCE):
                self._fence(end - len(line) - 1, end)
            elif not self._in_code:
                self._close(self._buffer, end=end - 1)
            self._restart()
            self._line_begin, self._line_keys = end, []
            return self.found is not None
        self._line += char
        if self._in_code:
            return False
        self._buffer += char
        if (char in " \t" and len(self._buffer) >= 2 and self._buffer[-2] in ".!?"
                and not _LIST_MARKER.fullmatch(self._buffer.lstrip())):
            self._close(self._buffer, end=end)
            self._restart()
        return self.found is not None

    def _fence(self, line_start: int, end: int) -> None:
        """A fence line just ended: a code block opens, or closes and counts as one unit."""
        if not self._in_code:
            self._in_code, self._code_start = True, line_start
            return
        self._in_code = False
        self._close(self.text[self._code_start:end], start=self._code_start, end=end,
                    block=True)

    def _restart(self) -> None:
        self._buffer = ""
        self._tail_checked = 0

    def _close(self, raw: str, *, end: int, start: int | None = None,
               block: bool = False) -> None:
        start = end - len(raw) if start is None else start
        key = _key(raw)
        if not key or self.found is not None:
            return
        self._units.append(_Unit(key, start, end))
        # counted: the line up to this unit, so that one clause shared by different
        # list items ("Raises X if qty is not positive.") is not taken for a loop
        if block:
            line, line_start = key, start
        else:
            self._line_keys.append(key)
            line, line_start = " / ".join(self._line_keys), self._line_begin
        places = self._seen.setdefault(line, [])
        places.append(line_start)
        if len(places) >= self.times and len(line.split()) >= self.long_words:
            self.found = Repetition(line, len(places), "count", places[1])
            return
        self._check_cycle()

    # -- the rules ---------------------------------------------------------------------
    def _check_cycle(self) -> None:
        units = self._units
        for period in range(1, self.max_period + 1):
            if len(units) < period * self.times:
                break
            matched = 0
            while (matched + period < len(units)
                   and units[-1 - matched].key == units[-1 - matched - period].key):
                matched += 1
            copies = matched // period + 1
            if copies < self.times:
                continue
            first = len(units) - copies * period
            chars = units[-1].end - units[first].start
            if chars >= self.cycle_chars:
                block = " ".join(u.key for u in units[first:first + period])
                self.found = Repetition(block, copies, "cycle", units[first + period - 1].end)
                return

    def _check_tail(self) -> None:
        run = self._buffer
        for period in range(4, min(120, len(run) // self.times) + 1):
            tail = run[-period:]
            if run.endswith(tail * self.times) and period * self.times >= self.cycle_chars // 2:
                start = len(self.text) - len(run)
                copies = self.times
                while run.endswith(tail * (copies + 1)):
                    copies += 1
                first = len(run) - copies * period
                self.found = Repetition(_key(tail) or tail.strip(), copies, "cycle",
                                        start + first + period)
                return


def _key(raw: str) -> str:
    """A unit as compared: its words, lower case, without a list marker or numbering."""
    text = _SPACES.sub(" ", raw).strip()
    text = _LIST_MARKER.sub("", text).strip().lower()
    if not _WORD.search(text):
        return ""
    return text.rstrip(".!?;: ")


def find_repetition(text: str, **settings: int) -> Repetition | None:
    """The first repetition in a whole text (a detector fed it at once)."""
    detector = RepetitionDetector(**settings)
    detector.feed(text)
    return detector.finish()


def kept(text: str, found: Repetition) -> str:
    """The text worth keeping of one that repeated itself."""
    return text[:found.keep].rstrip()
