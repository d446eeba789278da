"""A context-reading scripted model for ``experience`` chains (tests only).

- a task summary (the structured call): the developer's statements in the transcript,
  verbatim, as the summary;
- writing a task's function: the original code when the prompt holds everything the
  task needs (an experience task: its facts; a related task: the facts of the earlier
  tasks it depends on, which the repository copy no longer shows), else a stub;
- anything else: "Noted.".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from replay.locoeval.prepare import find_function
from replay.locoeval.tasks import answer_with
from replay.swecontext.experience import ExperienceSet, Task

DEVELOPER = re.compile(r"^Developer: (.*?)(?=\nAssistant: |\Z)", re.M | re.S)


def norm(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


class ExperienceReader:
    def __init__(self, chains: ExperienceSet, repo: Path) -> None:
        self.chains = chains
        self.repo = repo
        self.written: list[tuple[str, str]] = []  # (task id, "code" | "stub")

    def original(self, task: Task) -> str:
        source = (self.repo / task.path).read_text("utf-8")
        span = find_function(source, task.function)
        return "\n".join(source.splitlines()[span.start:span.end + 1])

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        system = str(messages[0]["content"]) if messages[0]["role"] == "system" else ""
        last = str(messages[-1]["content"])
        if system.startswith("You summarise a finished coding task"):
            return json.dumps({"summary": " ".join(DEVELOPER.findall(last))})
        prompt = norm("\n".join(str(m["content"]) for m in messages))
        for task in (*self.chains.experience, *self.chains.related):
            if last.rstrip().endswith(task.request):  # not one quoted in a transcript
                needed = task.needs if task.depends_on else task.facts
                if all(norm(fact) in prompt for fact in needed):
                    self.written.append((task.id, "code"))
                    return answer_with(self.original(task))
                self.written.append((task.id, "stub"))
                name = task.function.split(".")[-1]
                params = task.signature.split("(", 1)[1].rsplit(")", 1)[0]
                return f"```python\ndef {name}({params}):\n    raise NotImplementedError\n```"
        return "Noted."
