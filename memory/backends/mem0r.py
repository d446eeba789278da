"""``mem0r`` (Mem0^R): Mem0 whose memories link to repository locations.

Extraction also returns the locations each fact refers to (``path``,
``path::Qual.name`` or a bare name). On a query, every retrieved memory brings
the code of its locations through ``RepoIndex.locate`` (exact, else fuzzy);
unresolvable locations are shown as such, locations outside the repository are
refused when the fact is stored. This backend does its own repository
retrieval, so it gets no generic top-10 functions.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from memory.backends._memstore import Memory
from memory.backends.base import render_chunk
from memory.backends.mem0 import MAX_FACTS, Fact, Mem0Backend, statements, unique_facts
from memory.index.repo import LocationRefused, refuse_control_characters
from memory.llm.lenient_json import MalformedJSON
from memory.types import ContextPack, Section, Turn

log = logging.getLogger(__name__)

EXTRACT_PROMPT_R = """You keep the long-term memory of a coding assistant working in a git
repository. Read one exchange between a developer and the assistant and list the facts worth
remembering for later turns: requirements and their revisions, decisions,
constraints, preferences and conventions, and facts about the repository. One
short sentence per fact, copied or condensed from the developer's words. Never
repeat a fact. For each fact, list the repository locations it is about, chosen
only among the names that appear in the exchange (a file, a function, a class).

Example.
Developer: validate_input in app/forms.py must reject empty strings.
Assistant: Understood.
Answer: {"facts": [{"text": "validate_input must reject empty strings.",
"locations": ["app/forms.py::Form.validate_input"]}]}

Nothing worth remembering: {"facts": []}"""
MAX_LOCATIONS = 3  # per fact
MAX_CANDIDATES = 24  # location names offered to the model per exchange

# a path from the start of its run of path characters only (tried from every position of a
# long word, it took seconds: quadratic)
_PATH = re.compile(r"(?<![\w./-])[\w./-]+\.(?:py|pyi|md)(?:::[A-Za-z_][\w.]*)?")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_NAME = re.compile(r"`([A-Za-z_][\w.]*)`|\b([A-Za-z_]\w*)\s*\("
                   r"|\b([a-z]\w*_\w+|[A-Z][a-z0-9]+[A-Z]\w*)\b")


def exchange_names(text: str) -> list[str]:
    """Names in an exchange that look like code: paths, dotted names, snake_case,
    CamelCase, calls and backticked words, in order of appearance."""
    found: list[tuple[int, str]] = [(m.start(), m.group(0)) for m in _PATH.finditer(text)]
    found += [(m.start(), m.group(0)) for m in _DOTTED.finditer(text)
              if not m.group(0).endswith((".py", ".pyi", ".md"))]
    found += [(m.start(), next(g for g in m.groups() if g)) for m in _NAME.finditer(text)]
    return list(dict.fromkeys(name.strip(".") for _, name in sorted(found)))


# {"facts": [{"text": "short sentence", "locations": ["path::Qual.name", ...]}]}
def extract_schema_r(locations: list[str] | None,
                     texts: list[str] | None = None) -> dict[str, Any]:
    """Facts with locations limited to ``locations`` (none when it is empty; any string
    when it is None) and texts to ``texts`` when given."""
    where: dict[str, Any] = {"type": "array", "maxItems": 0, "items": {"type": "string"}}
    if locations is None:
        where = {"type": "array", "maxItems": MAX_LOCATIONS, "items": {"type": "string"}}
    elif locations:
        where = {"type": "array", "maxItems": MAX_LOCATIONS,
                 "items": {"type": "string", "enum": locations}}
    text: dict[str, Any] = {"type": "string", "minLength": 3, "maxLength": 300}
    if texts is not None:
        text = {"type": "string", "enum": texts}
    fact = {"type": "object",
            "properties": {"text": text, "locations": where},
            "required": ["text", "locations"], "additionalProperties": False}
    most = MAX_FACTS if texts is None else min(MAX_FACTS, len(texts))
    return {"type": "object",
            "properties": {"facts": {"type": "array", "items": fact, "maxItems": most}},
            "required": ["facts"], "additionalProperties": False}


class Mem0RBackend(Mem0Backend):
    name = "mem0r"
    extract_prompt = EXTRACT_PROMPT_R

    def candidates(self, turn: Turn) -> list[str]:
        """The locations the extractor may name: the exchange's code-like names that
        resolve in the repository, as their resolved locations (any name without one)."""
        names = exchange_names(f"{turn.user}\n{turn.assistant}")
        if self.env.repo is None:
            return names[:MAX_CANDIDATES]
        kept: list[str] = []
        for name in names:
            try:
                found = self.env.repo.locate(name)
            except LocationRefused:
                continue
            if found is not None:
                kept.append(found.chunk.location)
        return list(dict.fromkeys(kept))[:MAX_CANDIDATES]

    def extract_schema(self, turn: Turn) -> dict[str, Any] | None:
        # Under constrained decoding the model picks among the developer's statements and
        # the locations the exchange names (and the repository has); other models are
        # told in the prompt and checked after.
        if not self.env.llm.constrained():
            return extract_schema_r(None)
        texts = statements(turn.user)
        return extract_schema_r(self.candidates(turn), texts) if texts else None

    def _safe_locations(self, raw: Any) -> list[str]:
        if not isinstance(raw, list):
            raw = [raw] if isinstance(raw, str) else []
        kept: list[str] = []
        for item in raw:
            location = str(item).strip().strip("`")
            if not location:
                continue
            path, sep, qual = location.partition("::")
            try:
                refuse_control_characters(location)
                if self.env.repo is not None and (sep or "/" in path or path.endswith(".py")):
                    rel = self.env.repo.relative(path)
                    location = f"{rel}::{qual}" if sep else rel
            except LocationRefused as exc:
                log.warning("mem0r: refused location %r: %s", location, exc)
                continue
            kept.append(location)
        return list(dict.fromkeys(kept))

    def parse_facts(self, data: Any) -> list[Fact]:
        items = data.get("facts", []) if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise MalformedJSON("'facts' is not a list")
        facts: list[Fact] = []
        for item in items:
            if isinstance(item, str) and item.strip():
                facts.append(Fact(item.strip()))
            elif isinstance(item, dict) and str(item.get("text", "")).strip():
                facts.append(Fact(str(item["text"]).strip(),
                                  self._safe_locations(item.get("locations", []))))
        return unique_facts(facts)

    def fact_line(self, fact: Fact) -> str:
        return fact.text + (f" [{', '.join(fact.locations)}]" if fact.locations else "")

    def memory_line(self, memory: Memory) -> str:
        return memory.text + (f" [{', '.join(memory.locations)}]" if memory.locations else "")

    def resolve(self, location: str) -> tuple[str, str] | None:
        """(resolved location, code) of a memory's location, or None when unresolvable."""
        if self.env.repo is None:
            return None
        try:
            found = self.env.repo.locate(location)
        except LocationRefused:
            return None
        if found is None:
            return None
        return found.chunk.location, found.chunk.code

    async def context(self, query: str, *, budget: int) -> ContextPack:
        sections: list[Section] = []
        shown_code: set[str] = set()
        used = 0
        for memory in await self.relevant(query):
            links: list[str] = []
            code_sections: list[Section] = []
            for location in memory.locations:
                resolved = self.resolve(location)
                if resolved is None:
                    links.append(f"{location} (unresolved)")
                    continue
                where, code = resolved
                links.append(where if where == location else f"{location} -> {where}")
                if where not in shown_code:
                    text = render_chunk(where, code)
                    code_sections.append(Section("repo", where, text, self.env.count(text)))
            text = f"- {memory.text}" + (f"\n  linked: {'; '.join(links)}" if links else "")
            mem_section = Section("memory", memory.id, text, self.env.count(text))
            if used + mem_section.tokens > budget:
                break
            sections.append(mem_section)
            used += mem_section.tokens
            for code in code_sections:
                if used + code.tokens <= budget:
                    sections.append(code)
                    shown_code.add(code.source)
                    used += code.tokens
        return ContextPack(query, sections, self.env.count(query))
