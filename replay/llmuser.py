"""The LLM mock user, as LoCoEval drives its conversations.

For query t the model sees a window of (at most) 10 queries ending at t: the
summaries of all of them, and for the last one its type, its information items
and the contents retrieved for its keys (the code of its locations, the best
repository hits for its keywords). The assistant's previous answer is put in
right before the last query. Recap queries inside the window are left out,
unless the recap is the second to last. If the model fails, the template
rendering of the query is used and the fallback is counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.llm import LLM, LLMError
from replay.mockuser import TemplateUser
from replay.outline import Outline, Query

if TYPE_CHECKING:
    from memory.repo import RepoIndex

WINDOW = 10
RETRIEVED_CHARS = 1200

SYSTEM = """You play a developer in a long conversation with a coding assistant about
a repository. Write the developer's next message, in the first person, as a
developer would type it. The message must convey every information item listed
for it, faithfully (do not correct, soften or add requirements), and it may use
the retrieved code to be concrete. Write only the message."""


class LLMUser:
    name = "llm"

    def __init__(self, outline: Outline, llm: LLM, repo: RepoIndex | None = None,
                 seed: int = 0) -> None:
        self.outline = outline
        self.llm = llm
        self.repo = repo
        self.queries = outline.queries()
        self.items = outline.items
        self.template = TemplateUser(outline, seed)
        self.fallbacks = 0

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
            lines += [f"- {self.items[i].text}" for i in current.contains]
        retrieved = self.retrieved(current)
        if retrieved:
            lines += ["", "Retrieved code:", *retrieved]
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
