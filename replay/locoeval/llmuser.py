"""The LLM mock user, as LoCoEval drives its conversations.

For query t the model sees a window of (at most) 10 queries ending at t: the
summaries of all of them, and for the last one its type, its information items
and the contents retrieved for its keys (the code of its locations, the best
repository hits for its keywords). The assistant's previous answer is put in
right before the last query. Recap queries inside the window are left out,
unless the recap is the second to last. If the model fails, the template
rendering of the query is used and the fallback is counted.

LoCoEval's reference-query step: a real developer question similar to the query
(drawn at random among the 10 most similar by embedding) is shown as a style
reference. It needs a file of real questions (``--reference-queries``); without
one the step is skipped, and ``reference_status`` says so. The mock user writes
free text: its answer is the message, no JSON.

Revision cues (``revision_cues``): the model is told to state each item plainly, never
as a change of an earlier point, except the items the template user would cue at that
rate (``TemplateUser.cue``): those are marked, and it says in its own words that they
replace an earlier version.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memory.llm.client import LLM, LLMError
from replay.locoeval.mockuser import TemplateUser
from replay.locoeval.outline import Outline, Query

if TYPE_CHECKING:
    from memory.index.embed import Embedder
    from memory.index.repo import RepoIndex

WINDOW = 10
RETRIEVED_CHARS = 1200
TOP_REFERENCES = 10  # LoCoEval: a reference drawn at random among the 10 most similar
SKIPPED = "skipped (no --reference-queries file)"


def load_reference_queries(path: Path) -> list[str]:
    """Real developer questions: one per line, or JSONL with a ``"query"`` field.

    Blank lines and JSON objects without a ``"query"`` string are skipped; duplicates
    are kept once. Raises ValueError when the file cannot be read or holds none."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"reference queries {path}: {exc}") from exc
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                row = None
            if isinstance(row, dict):
                line = row["query"] if isinstance(row.get("query"), str) else ""
        line = " ".join(line.split())
        if line:
            found.append(line)
    if not found:
        raise ValueError(f"reference queries {path}: no questions in the file")
    return list(dict.fromkeys(found))


class ReferenceQueries:
    """A pool of real questions; ``draw`` picks one among the most similar to a text."""

    def __init__(self, queries: list[str], embedder: Embedder, *, top: int = TOP_REFERENCES,
                 source: str = "") -> None:
        self.queries = queries
        self.embedder = embedder
        self.top_k = top
        self.source = source
        self._vectors: np.ndarray | None = None

    @classmethod
    def from_file(cls, path: Path, embedder: Embedder) -> ReferenceQueries:
        return cls(load_reference_queries(path), embedder, source=str(path))

    def top(self, text: str) -> list[str]:
        """The ``top_k`` questions most similar to ``text``, most similar first."""
        if self._vectors is None:
            self._vectors = np.asarray(self.embedder.embed(self.queries), dtype=np.float32)
        query = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        order = np.argsort(-(self._vectors @ query), kind="stable")[: self.top_k]
        return [self.queries[i] for i in order]

    def draw(self, text: str, rng: random.Random) -> str:
        return rng.choice(self.top(text))

SYSTEM = """You play a developer in a long conversation with a coding assistant about
a repository. Write the developer's next message, in the first person, as a
developer would type it. The message must convey every information item listed
for it, faithfully (do not correct, soften or add requirements), and it may use
the retrieved code to be concrete. State each item plainly as what holds: do not say
or hint that it changes, corrects or replaces anything said before, unless the item is
marked as replacing an earlier version; then say so in your own words. Write only the
message."""
REPLACES = ("  [replaces what you said earlier on this point: say so naturally, e.g. "
            "\"{example}\"]")


class LLMUser:
    name = "llm"

    def __init__(self, outline: Outline, llm: LLM, repo: RepoIndex | None = None,
                 seed: int = 0, references: ReferenceQueries | None = None,
                 revision_cues: float = 0.0) -> None:
        self.outline = outline
        self.llm = llm
        self.repo = repo
        self.seed = seed
        self.references = references
        self.queries = outline.queries()
        self.items = outline.items
        self.template = TemplateUser(outline, seed, revision_cues)  # fallback, and the cues
        self.fallbacks = 0
        self.drawn: dict[int, str] = {}  # query index -> the reference question shown

    @property
    def reference_status(self) -> str:
        """What the reference-query step did, for the results."""
        if self.references is None:
            return SKIPPED
        return (f"{len(self.drawn)} drawn among the top {self.references.top_k} of "
                f"{len(self.references.queries)} questions"
                + (f" from {self.references.source}" if self.references.source else ""))

    def reference(self, t: int) -> str | None:
        """The style reference for query ``t`` (seeded by seed, outline and query)."""
        if self.references is None:
            return None
        if t not in self.drawn:
            query = self.queries[t]
            text = " ".join([query.summary, *(self.items[i].text for i in query.contains)])
            rng = random.Random(f"{self.seed}:{self.outline.id}:{query.id}:reference")
            self.drawn[t] = self.references.draw(text.strip() or query.type, rng)
        return self.drawn[t]

    def window(self, t: int) -> list[Query]:
        shown = self.queries[max(0, t - WINDOW + 1):t + 1]
        last = len(shown) - 1
        return [q for i, q in enumerate(shown)
                if not q.recap or i >= last - 1]  # recaps only as second to last (or last)

    def retrieved(self, query: Query) -> list[str]:
        if self.repo is None:
            return []
        out: list[str] = []
        for key in query.keys:
            if key.type == "location":
                try:
                    found = self.repo.locate(key.key)
                except ValueError:
                    found = None
                if found is not None:
                    out.append(f"# {found.chunk.location}\n{found.chunk.code}")
            elif key.key:
                hits = self.repo.search(key.key, 1)
                out += [f"# {h.chunk.location}\n{h.chunk.code}" for h in hits]
        return [text[:RETRIEVED_CHARS] for text in out]

    def prompt(self, t: int, previous_answer: str) -> list[dict[str, str]]:
        window = self.window(t)
        current = self.queries[t]
        lines = ["Earlier and current topics of the conversation (oldest first):"]
        lines += [f"- {q.summary or q.type}" for q in window[:-1]]
        if previous_answer:
            lines += ["", "The assistant's last answer:", previous_answer.strip()[:2000]]
        lines += ["", f"Your next message. Kind: {current.type or 'message'}."
                  + (" It is a recap of what holds now." if current.recap else ""),
                  f"Summary: {current.summary}" if current.summary else ""]
        if current.contains:
            lines.append("Information items to convey:")
            for item_id in current.contains:
                cue = self.template.cue(item_id)
                lines.append(f"- {self.items[item_id].text}" + (
                    REPLACES.format(example=cue.split("{")[0].strip()) if cue else ""))
        retrieved = self.retrieved(current)
        if retrieved:
            lines += ["", "Retrieved code:", *retrieved]
        reference = self.reference(t)
        if reference:
            lines += ["", "A real developer question, as a style reference only (write like "
                      "it: tone, length, wording; do not take its content):", reference]
        return [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": "\n".join(lines)}]

    async def message(self, t: int, previous_answer: str) -> str:
        try:
            text = await self.llm.complete(self.prompt(t, previous_answer), purpose="mock_user",
                                           temperature=0.0, max_tokens=400)
        except LLMError:
            text = ""
        if not text.strip():
            self.fallbacks += 1
            return self.template.render(self.queries[t])
        return text.strip()
