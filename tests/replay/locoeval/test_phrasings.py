"""The stored re-wordings by another writer (``phrasings/*.json`` beside the demo's and each
set's outlines): every item covered, the same code names, the writer's own words.

A phrasing file holds ``{"writer", "note", "items": {outline id: {item id: text}}}``. Each text
must keep every code name of the builder's text (backticked names, identifiers and quoted
literals and numbers of the free text; a path may be said as its dotted module or, when no
other file has that name, its file name; a qualified ``C.m`` as its two parts), add no
identifier the builder's text does not hold, differ from the builder's text, and carry no
revision cue word (a later item supersedes by what it says).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay.locoeval import DEMO

SETS = DEMO.parent / "sets"
CUES = re.compile(r"\b(actually|instead|rather|no longer|scratch that|change of plan|anymore|"
                  r"changed my mind|on second thought|correction)\b", re.I)
PLAIN = {"RFC"}  # capitalised words that are not code names ("RFC 3986")
IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?!\w)")


def _phrasing_files() -> list[tuple[Path, Path]]:
    pairs = [(f, DEMO / "outlines") for f in sorted((DEMO / "phrasings").glob("*.json"))]
    for folder in sorted(p for p in SETS.glob("*") if p.is_dir()):
        pairs += [(f, folder / "outlines") for f in sorted((folder / "phrasings").glob("*.json"))]
    return pairs


def _outlines(folder: Path) -> list[dict]:
    return [json.loads(f.read_text("utf-8")) for f in sorted(folder.glob("*.json"))
            if f.name != "build-report.json"]


def _codeish(token: str) -> bool:
    return ("_" in token or "." in token or any(c.isdigit() for c in token)
            or (len(token) > 1 and token[1:] != token[1:].lower()))


def names_of(text: str) -> list[str]:
    """The code names of a builder's text: backticked, then identifiers, quoted literals and
    numbers of the rest."""
    free = re.sub(r"`[^`]+`", " ", text)
    return [*re.findall(r"`([^`]+)`", text), *re.findall(r"(?<!\w)'[^']*'(?!\w)", free),
            *(t for t in IDENT.findall(free) if _codeish(t)),
            *re.findall(r"(?<![\w.])\d+(?:\.\d+)?", free)]


def forms(name: str) -> set[str]:
    """How a name may be said: a path also as its dotted module or its file name."""
    out = {name}
    if name.endswith(".py"):
        module = name[:-3].removeprefix("src/")
        out |= {module.replace("/", "."), name.rsplit("/", 1)[-1]}
    return out


def said(form: str, text: str) -> bool:
    """``form`` stands in ``text`` on its own (``orders.py`` is not said by ``stock/orders.py``)."""
    path = "/" in form or form.endswith(".py")
    left = (r"(?<![\w/.])" if path else r"(?<!\w)") if re.match(r"\w", form) else ""
    right = r"(?![\w/])" if re.search(r"\w$", form) else ""
    return re.search(left + re.escape(form) + right, text) is not None


def kept(name: str, text: str) -> bool:
    if any(said(form, text) for form in forms(name)):
        return True
    if "." in name and "/" not in name and not name.endswith(".py"):
        return all(re.search(rf"(?<!\w){re.escape(part)}(?!\w)", text) for part in name.split("."))
    return False


def problems(old: str, new: str) -> list[str]:
    """What is wrong with ``new`` as a re-wording of the builder's ``old``."""
    out = [] if new.strip() and new != old else ["empty or the builder's own text"]
    names = names_of(old)
    out += [f"lost {n!r}" for n in names if not kept(n, new)]
    params = re.search(r"takes (\(.*\))\.$", old)
    if params and params.group(1) not in new:
        out.append(f"parameter list {params.group(1)} not said as is")
    known = set()
    for name in names:
        known |= forms(name) | set(name.split(".")) | set(re.findall(r"[\w./]+", name))
    dependency = re.match(r"^`([^`]+)` needs `([^`]+)` from the `([^`]+)` module\.$", old)
    if dependency:
        known.add(f"{dependency.group(3)}.{dependency.group(2)}")
    out += [f"added {t!r}" for t in IDENT.findall(re.sub(r"['\"`]", " ", new))
            if _codeish(t) and t not in PLAIN and t not in known and t not in old]
    if CUES.search(new) and not CUES.search(old):
        out.append("revision cue word")
    return out


FILES = _phrasing_files()


def test_there_are_phrasings_for_the_demo_and_three_sets():
    assert any(outlines == DEMO / "outlines" for _, outlines in FILES)
    assert len({outlines for _, outlines in FILES}) >= 4


@pytest.mark.parametrize(("phrasing", "outlines"), FILES,
                         ids=[f"{o.parent.name}/{p.name}" for p, o in FILES])
def test_every_item_is_reworded_with_its_names(phrasing, outlines):
    data = json.loads(phrasing.read_text("utf-8"))
    assert set(data) == {"writer", "note", "items"} and data["writer"] and data["note"]
    wrong = []
    for outline in _outlines(outlines):
        texts = data["items"].get(outline["id"], {})
        ids = {item["id"] for s in outline["samples"] for item in s["items"]}
        assert set(texts) == ids, f"{outline['id']}: {sorted(set(texts) ^ ids)}"
        for sample in outline["samples"]:
            for item in sample["items"]:
                wrong += [(outline["id"], item["id"], p)
                          for p in problems(item["text"], texts[item["id"]])]
    assert set(data["items"]) == {o["id"] for o in _outlines(outlines)}
    assert wrong == []


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("`f` belongs in `pkg/a.py`.", "Put f in pkg.a.", []),
    ("`f` belongs in `pkg/a.py`.", "Put f in pkg/b.py.", ["lost 'pkg/a.py'", "added 'b.py'"]),
    ("`f` belongs in `pkg/a.py`.", "Put f in a.py.", []),
    ("`f` belongs in `pkg/a.py`.", "Put f in lib/a.py.", ["lost 'pkg/a.py'"]),
    ("`C.m` takes (self, n).", "Could the m method of C take (self, n)?", []),
    ("`C.m` takes (self, n).", "C.m takes (n, self).", ["parameter list (self, n) not said as is"]),
    ("`f` needs `X` from the `m` module.", "f uses m.X.", []),
    ("For `f`: Raises ValueError when n < 0.", "f must raise KeyError when n < 0.",
     ["lost 'ValueError'", "added 'KeyError'"]),
    ("`f` should: Round to 2 places.", "Have f round to 3 places.", ["lost '2'"]),
    ("`f` belongs in `a.py`.", "Scratch that, f goes in a.py.", ["revision cue word"]),
    ("`f` belongs in `a.py`.", "`f` belongs in `a.py`.", ["empty or the builder's own text"]),
])
def test_the_check_itself(old, new, expected):
    assert problems(old, new) == expected
