"""LoCoMo's data read into conversations, with errors that name where a file is wrong.

Two layouts of the same data (github.com/snap-research/locomo, CC BY-NC 4.0, not shipped):

- ``data/locomo10.json``: a JSON list of conversations. Each has ``sample_id``;
  ``conversation`` with ``speaker_a``, ``speaker_b`` and, for every session N,
  ``session_N`` (a list of turns ``{speaker, dia_id: "D<N>:<k>", text}``, an image turn
  with ``img_url`` and ``blip_caption``) beside ``session_N_date_time``; ``qa``, a list of
  ``{question, answer, evidence: [dia_id, ...], category}``. Other keys
  (``observation``, ``session_summary``, ``event_summary``) are not read.
- one file per conversation, as ``data/locomo10.zip`` (the repository's first release)
  holds them under ``data/multimodal_dialog/locomo10_v2/`` (``26.json`` ... ``50.json``):
  the same fields at the top level of one JSON object (``speaker_a``, ``speaker_b``,
  ``session_N``, ``session_N_date_time``, ``qa``, beside ``events_session_N``,
  ``session_N_observation`` and ``session_N_summary``), and no ``sample_id``: the
  file's name gives it (``26.json`` is ``conv-26``, as ``locomo10.json`` calls it). A
  file or the folder of them is read; the folder's conversations in the order of their
  numbers, as ``locomo10.json`` lists them.

The traps: sessions are numbered, not ordered by key (``session_10`` comes after
``session_9``), and a date may be given for a session that has no turns (it is not a
session); a category-5 (adversarial) question keeps its gold under ``adversarial_answer``,
not ``answer``; an answer may be a number (a year); an evidence entry may hold several ids
in one string (``"D8:6; D9:17"``) or name a turn the conversation does not have (kept, and
counted apart by the evidence recall).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

CATEGORIES = (1, 2, 3, 4, 5)  # by number: papers disagree on the names (1 multi-hop,
#                               2 temporal, 3 open-domain, 4 single-hop, 5 adversarial)
ADVERSARIAL = 5
_SESSION = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D\d+:\d+")


class LocomoError(ValueError):
    """A LoCoMo file that cannot be read: the message names the conversation and field."""


@dataclass(frozen=True)
class DialogTurn:
    session: int
    dia_id: str
    speaker: str
    text: str
    caption: str = ""  # blip_caption of a shared image ("" none)

    def said(self) -> str:
        """The turn as it is fed to memory (without its date): the speaker named, an
        image as its caption."""
        photo = f" [shares a photo of: {self.caption}]" if self.caption else ""
        return f'{self.speaker} said, "{self.text}"{photo}'


@dataclass(frozen=True)
class Session:
    number: int
    date_time: str  # as LoCoMo writes it: "1:56 pm on 8 May, 2023"
    turns: tuple[DialogTurn, ...]


@dataclass(frozen=True)
class Question:
    index: int  # its place in the conversation's qa list
    question: str
    answer: str  # the gold: ``adversarial_answer`` for category 5
    evidence: tuple[str, ...]  # dia_ids
    category: int

    @property
    def id(self) -> str:
        return f"q{self.index}"


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo sample: a source of the ``locomo`` benchmark."""

    id: str  # sample_id
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    source: Path | None = None
    kind: str = "locomo"

    def turns(self) -> list[DialogTurn]:
        return [t for s in self.sessions for t in s.turns]

    def turn(self, dia_id: str) -> DialogTurn | None:
        return self._by_id.get(dia_id)

    @cached_property
    def _by_id(self) -> dict[str, DialogTurn]:
        return {t.dia_id: t for t in self.turns()}


def _field(record: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(record, dict):
        raise LocomoError(f"{where}: not a JSON object")
    if key not in record:
        raise LocomoError(f"{where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise LocomoError(f"{where}: field '{key}' is not a {names} "
                          f"({type(value).__name__})")
    return value


def _text(value: Any) -> str:
    return str(value).strip()


def _turn(raw: Any, number: int, n: int, where: str) -> DialogTurn:
    here = f"{where}, session_{number}[{n}]"
    caption = raw.get("blip_caption") if isinstance(raw, dict) else None
    return DialogTurn(number, _text(_field(raw, "dia_id", here, str)),
                      _text(_field(raw, "speaker", here, str)),
                      _text(_field(raw, "text", here, str)),
                      _text(caption) if isinstance(caption, str) else "")


def _sessions(conv: dict[str, Any], where: str, holder: str) -> tuple[Session, ...]:
    """``holder``: where the session fields are (``"<where>, conversation"`` in
    locomo10.json, the conversation itself in a one-conversation file)."""
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION.match(key)))
    if not numbers:
        raise LocomoError(f"{holder}: no session_N field")
    sessions = []
    for number in numbers:
        turns = _field(conv, f"session_{number}", holder, list)
        date = _field(conv, f"session_{number}_date_time", holder, str)
        sessions.append(Session(number, date.strip(), tuple(
            _turn(raw, number, n, where) for n, raw in enumerate(turns))))
    return tuple(sessions)


def evidence_ids(raw: Any) -> tuple[str, ...]:
    """The dia_ids of an evidence list (``"D8:6; D9:17"`` holds two), in order."""
    found: list[str] = []
    for entry in raw if isinstance(raw, list) else [raw]:
        found += _DIA_ID.findall(str(entry))
    return tuple(dict.fromkeys(found))


def _question(raw: Any, n: int, where: str) -> Question:
    here = f"{where}, qa[{n}]"
    category = _field(raw, "category", here, int)
    if category not in CATEGORIES:
        raise LocomoError(f"{here}: field 'category' is {category}, not one of 1-5")
    question = _text(_field(raw, "question", here, str))
    key = "adversarial_answer" if category == ADVERSARIAL and "adversarial_answer" in raw \
        else "answer"
    answer = _text(_field(raw, key, here, (str, int, float)))
    return Question(n, question, answer, evidence_ids(raw.get("evidence", [])), category)


def _conversation(conv: dict[str, Any], qa: list[Any], sample: str, where: str,
                  holder: str, path: Path | None) -> Conversation:
    a = _text(_field(conv, "speaker_a", holder, str))
    b = _text(_field(conv, "speaker_b", holder, str))
    return Conversation(sample.strip(), a, b, _sessions(conv, where, holder),
                        tuple(_question(q, n, where) for n, q in enumerate(qa)), path)


def parse(data: Any, path: Path | None = None) -> list[Conversation]:
    """LoCoMo's list of conversations (``LocomoError`` naming conversation and field)."""
    name = str(path) if path is not None else "LoCoMo data"
    if not isinstance(data, list):
        raise LocomoError(f"{name}: not a LoCoMo file (a JSON list of conversations, "
                          f"not a {type(data).__name__})")
    out: list[Conversation] = []
    for i, raw in enumerate(data):
        sample = raw.get("sample_id") if isinstance(raw, dict) else None
        where = f"{name}: conversation {sample if isinstance(sample, str) else f'#{i}'}"
        _field(raw, "sample_id", where, str)
        conv = _field(raw, "conversation", where, dict)
        out.append(_conversation(conv, _field(raw, "qa", where, list), sample, where,
                                 f"{where}, conversation", path))
    _unique(out, name)
    return out


def _unique(found: list[Conversation], name: str) -> None:
    ids = [c.id for c in found]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise LocomoError(f"{name}: sample_id {', '.join(twice)} appears more than once")


def sample_of(path: Path) -> str:
    """The sample_id of a one-conversation file without one: ``26.json`` is ``conv-26``
    (``locomo10.json``'s name for it), another name its stem."""
    stem = Path(path).stem
    return f"conv-{stem}" if stem.isdigit() else stem


def parse_one(data: Any, path: Path) -> Conversation:
    """One conversation of the per-conversation layout (``LocomoError`` naming file and
    field)."""
    sample = data.get("sample_id") if isinstance(data, dict) else None
    sample = sample if isinstance(sample, str) and sample.strip() else sample_of(path)
    where = f"{path}: conversation {sample}"
    if not isinstance(data, dict):
        raise LocomoError(f"{where}: not a LoCoMo conversation (a JSON object with "
                          f"speaker_a, speaker_b, session_N and qa, not a "
                          f"{type(data).__name__})")
    return _conversation(data, _field(data, "qa", where, list), sample, where, where, path)


def _load(path: Path) -> Any:
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LocomoError(f"{path}: cannot read: {exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LocomoError(f"{path}: broken JSON at line {exc.lineno}, column {exc.colno} "
                          f"({exc.msg}){_near(text[:exc.pos], exc.msg)}") from exc


def _number_first(path: Path) -> tuple[int, int, str]:
    stem = path.stem
    return (0, int(stem), "") if stem.isdigit() else (1, 0, stem)


def conversation_files(folder: Path) -> list[Path]:
    """The ``.json`` files of a folder of LoCoMo conversations, numbers first, in order."""
    return sorted((p for p in Path(folder).glob("*.json") if p.is_file()), key=_number_first)


def read(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo file (either layout) or of a folder of one-conversation
    files; a broken file is an error with its line, a file of the folder that is not a
    conversation an error naming it."""
    path = Path(path)
    if path.is_dir():
        files = conversation_files(path)
        if not files:
            raise LocomoError(f"{path}: no .json file of a LoCoMo conversation in it")
        found = [parse_one(_load(f), f) for f in files]
        _unique(found, str(path))
        return found
    data = _load(path)
    if isinstance(data, dict):
        return [parse_one(data, path)]
    return parse(data, path)


_KEY = re.compile(r'"([^"\\]+)"\s*:')
_SAMPLE = re.compile(r'"sample_id"\s*:\s*"([^"]*)"')
_AT_END = re.compile(r'"([^"\\]+)"\s*:?\s*$')
_DIA_TURN = re.compile(r'"dia_id"\s*:\s*"(D\d+:\d+)"')


def _near(before: str, msg: str) -> str:
    """Where a JSON error is: the last sample_id, turn and field named before it."""
    said = []
    samples = _SAMPLE.findall(before)
    turns = _DIA_TURN.findall(before)
    keys = _KEY.findall(before)
    broken = _AT_END.search(before) if "':'" in msg else None  # a key without its ':'
    if broken:
        keys.append(broken.group(1))
    if samples:
        said.append(f"last sample_id before it: conversation {samples[-1]}")
    if turns:
        said.append(f"last turn before it: {turns[-1]}")
    if keys:
        said.append(f"last field before it: '{keys[-1]}'")
    return "; " + "; ".join(said) if said else ""


def looks_like(data: Any) -> bool:
    """LoCoMo's shape: a list whose first item has sample_id, conversation and qa."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and {"sample_id", "conversation", "qa"} <= set(data[0]))


def looks_like_one(data: Any) -> bool:
    """One conversation of the per-conversation layout: an object with speaker_a,
    speaker_b, qa and a session_N."""
    return (isinstance(data, dict) and {"speaker_a", "speaker_b", "qa"} <= set(data)
            and any(_SESSION.match(key) for key in data))
