"""What the executor tests run in each Ray worker: the scripted model, set up there.

Importable by name (``tests.replay.workers``) so Ray can send these functions to its
workers by reference."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from replay.locoeval import DEMO
from replay.locoeval.prepare import find_function
from replay.locoeval.tasks import answer_with


def _original(path: str, qualname: str) -> str:
    source = (DEMO / "inventory" / path).read_text()
    span = find_function(source, qualname)
    return "\n".join(source.splitlines()[span.start:span.end + 1])


def demo_reply(messages: list[dict[str, Any]]) -> str:
    """The original function for a generation task, else a short reply."""
    last = messages[-1]["content"]
    match = re.match(r"Write the complete function `([\w.]+)` for `([\w/.]+)`", last)
    if match:
        return answer_with(_original(match.group(2), match.group(1)))
    return "Noted."


def demo_model() -> None:
    """The scripted model answering the demo, counting prompt words as tokens."""
    from tests.conftest import SCRIPT, _register_scripted

    _register_scripted()
    SCRIPT.default, SCRIPT.count_prompt = demo_reply, True


class Stamp:
    """A scripted provider that writes the time of every call it receives to ``path``
    (one line per call, appended: the calls of every worker in one file)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        with self.path.open("a") as fh:
            fh.write(f"{time.time():.6f}\n")
        return "ok"


def stamping_model(path: Path) -> None:
    from tests.conftest import SCRIPT, _register_scripted

    _register_scripted()
    SCRIPT.default = Stamp(path)


_READER: list[Any] = []


def reader_model() -> None:
    """The context-reading scripted model of ``tests/replay/reader.py`` over the demo."""
    from replay.locoeval.outline import load_outlines
    from tests.conftest import SCRIPT, _register_scripted
    from tests.replay.reader import ContextReader

    _register_scripted()
    if not _READER:
        _READER.append(ContextReader(load_outlines(DEMO / "outlines"), DEMO / "inventory"))
    # its answers are an assistant's length: streamed in pieces of 64 words, not word by word
    SCRIPT.default, SCRIPT.count_prompt, SCRIPT.piece_words = _READER[0], True, 64


def experience_model() -> None:
    """The experience chains' context-reading scripted model over the demo."""
    from replay.swecontext.experience import load_experience
    from tests.conftest import SCRIPT, _register_scripted
    from tests.replay.experience_reader import ExperienceReader

    _register_scripted()
    chains = load_experience(DEMO / "experience" / "inventory-chains.json")
    SCRIPT.default, SCRIPT.count_prompt = ExperienceReader(chains, DEMO / "inventory"), True
