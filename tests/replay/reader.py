"""A context-reading scripted model (tests only): it can say only what its prompt holds.

It is given the outlines as the run's voice says them (``replay.locoeval.voice.voiced``):
it recognises an item by what was said, not by the builder's wording.

Unlike a model that answers from the test's own knowledge, this one makes the
information flow through the context the backend built:

- a turn of the conversation: an assistant's answer (tests/replay/answers.py): the code
  the prompt showed for the question, each block explained, up to ``answer_words`` words
  (default 1500; a real assistant's repository answer is hundreds to a few thousand
  tokens), so that ``full``'s history grows as LoCoEval's;
- topics: the functions named (in backticks) in what was said to it (every message but
  its own earlier answers) and the questions asked in it, one per line;
- extraction: the prose lines said to it that mention the function asked about
  (stale and true statements alike: it does not resolve revisions), after a preamble;
- generation: the target's original code only when the prompt holds it (a leak), or
  when the prompt holds at least half of the sample's true items AND, for every unit
  that was revised, the true statement is the last one said; else a stub that fails
  its tests;
- memory prompts (Mem0's and Mem0^R's extraction and update, CodeMem's judge and notes,
  the summaries of compact, MemGPT and LD-Agent, A-MEM's notes): literal, from the
  exchange in the prompt (every prose line of the developer's message is a fact, every
  fact is ADDed or summarised verbatim; CodeMem keeps its context; A-MEM never evolves);
- MemGPT's tool steps: each statement of the developer's message inserted into archival
  memory; at a task query, archival memory searched for the function asked about;
- anything else: "Noted.".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from replay.locoeval.outline import Item, Outline, Sample
from replay.locoeval.prepare import find_function
from replay.locoeval.tasks import TOPICS_QUERY, answer_with
from tests.asked import asked
from tests.replay.answers import ANSWER_WORDS, answer

SENTENCE = re.compile(r"(?<=[.!?])\s+")
MARKER = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")
OPENER = re.compile(r"^(?:Next|Another thing|Now|Also|Moving on|To recap|Recap|"
                    r"Quick recap before we go on)[:,]\s*", re.I)
NAMED = re.compile(r"`([A-Za-z_][\w.]*)`")
CODE = re.compile(r"`([\w/.]+(?:::[\w.]+)?)`")  # a location or name, as cards' facts carry
DEVELOPER = re.compile(r"^(?:\[turn \d+\]\s)?[Dd]eveloper: (.*?)"
                       r"(?=\n(?:\[turn \d+\]\s)?[Aa]ssistant: |\n\[turn |\n\n|\Z)", re.M | re.S)
ASSISTANT = "You are engram, a coding assistant"  # memory/turn/agent.py's SYSTEM_PROMPT


def norm(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


QUOTED = re.compile(r'^(?:Evidence: )?"(.+)"(?: \([^()]*\))?$')  # a memory card's statement


def prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside code blocks, list markers and openers stripped; a
    quoted statement (as memory cards show the developer's words) is read as said."""
    out, in_code = [], False
    for raw in text.splitlines():
        if raw.lstrip().startswith("```"):
            in_code = not in_code
            continue
        line = OPENER.sub("", MARKER.sub("", raw).strip())
        line = QUOTED.sub(r"\1", line)
        if not in_code and line and not line.startswith(("#", "(See ")):
            out.append(line)
    return out


class ContextReader:
    """The scripted model's reply function: ``ContextReader(outlines, repo)(messages)``."""

    def __init__(self, outlines: list[Outline], repo: Path,
                 answer_words: int = ANSWER_WORDS) -> None:
        self.outlines = outlines  # as said: voiced as the run voices them (locoeval.voice)
        # what the mock user said as items: a question-shaped request states its item too
        self.items_said = {norm(i.text) for o in outlines for i in o.items.values()}
        # the code names of each item as said (a model sees them bare or quoted alike):
        # the builder's backticked names, in the order the item says them
        self.names_said = {i.text: said_names(i) for o in outlines for i in o.items.values()
                           if i.as_built}
        self.repo = repo
        self.answer_words = answer_words  # cap of a conversation answer (0: "Noted.")
        self.decisions: list[tuple[str, str]] = []  # (sample namespace, "code" | "stub")
        # task queries -> the function they ask about (memgpt searches its memory for it)
        self.asked = {text: s.function.split(".")[-1] for o in outlines for s in o.samples
                      for text in (o.tasks.extract.get(s.id), o.tasks.generate.get(s.id))
                      if text}

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        request = asked(messages)
        system, last, prompt = request.system, request.query, request.seen
        # what was said to it: its own earlier answers (code it quoted) are no topic or fact
        heard = "\n".join([*(str(m["content"]) for m in messages[:-1]
                              if m["role"] != "assistant"), request.calls])
        memory = self.memory_reply(system, last, request.calls if request.step else None)
        if memory is not None:
            return memory
        if last == TOPICS_QUERY:
            return self.topics(heard)
        for outline in self.outlines:
            for sample in outline.samples:
                if outline.tasks.extract.get(sample.id) == last:
                    return self.extract(sample, heard)
        candidates = [s for o in self.outlines for s in o.samples
                      if o.tasks.generate.get(s.id) == last]
        if candidates:
            return self.generate(candidates, prompt)
        if system.startswith(ASSISTANT):  # a turn of the conversation: an assistant's answer
            return answer(system, last, self.answer_words) if self.answer_words else "Noted."
        return "Noted."

    # -- the tasks -----------------------------------------------------------------------
    def topics(self, prompt: str) -> str:
        found: list[str] = []
        for line in prose_lines(prompt):
            found += [f"implementing `{name}`" for name in NAMED.findall(line)
                      if "/" not in name]
            if line.endswith("?"):
                found.append(line)
        listed = "\n".join(f"- {t}" for t in dict.fromkeys(found))
        return f"Here are the topics so far:\n{listed}" if listed else "No topics yet."

    def extract(self, sample: Sample, prompt: str) -> str:
        name = sample.function.split(".")[-1]
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        lines = [line for line in prose_lines(prompt) if pattern.search(line) and " " in line
                 and (line.endswith(".") or norm(line) in self.items_said)]
        listed = "\n".join(f"- {t}" for t in dict.fromkeys(lines))
        return f"Here is what we settled about `{name}`:\n{listed}" if listed else \
            f"We have not settled anything about `{name}`."

    def original(self, sample: Sample) -> str:
        source = (self.repo / sample.path).read_text("utf-8")
        span = find_function(source, sample.function)
        return "\n".join(source.splitlines()[span.start:span.end + 1])

    def generate(self, candidates: list[Sample], prompt: str) -> str:
        said = norm(prompt)
        sample = max(candidates, key=lambda s: sum(position(i, said) >= 0 for i in s.items))
        code = self.original(sample)
        body = norm("\n".join(code.splitlines()[1:]))
        if (body and body in said) or settled(sample, said):
            self.decisions.append((sample.namespace, "code"))
            return answer_with(code)
        self.decisions.append((sample.namespace, "stub"))
        name = sample.function.split(".")[-1]
        params = sample.signature.split("(", 1)[1].rsplit(")", 1)[0] if "(" in \
            sample.signature else ""
        return f"```python\ndef {name}({params}):\n    raise NotImplementedError\n```"

    # -- memory operations of the backends -------------------------------------------------
    def memory_reply(self, system: str, last: str, step: str | None = None) -> str | None:
        """The reply to a backend's own request; ``step``: this answer's calls so far when
        the request is a tool-loop step (memgpt's)."""
        if system.startswith("You keep the long-term memory"):
            user = last.split("\nAssistant:", 1)[0].removeprefix("Developer: ")
            facts = [line for line in prose_lines(user) if 12 < len(line) <= 300][:5]
            if "working in a git" in system.splitlines()[0]:  # Mem0^R: facts with locations
                where = list(dict.fromkeys(re.findall(r"`([\w/.]+::[\w.]+)`", user)))[:1]
                return json.dumps({"facts": [{"text": f, "locations": where} for f in facts]})
            return json.dumps({"facts": facts})
        if system.startswith("You keep the decision memory"):  # cards: facts with locations
            user = last.split("\nAssistant:", 1)[0].removeprefix("Developer: ")
            facts = [line for line in prose_lines(user) if 12 < len(line) <= 300][:5]
            return json.dumps({"facts": [
                {"text": f, "locations": self.names_said.get(f, CODE.findall(f))[:2]}
                for f in facts]})
        if system.startswith("You decide which memory"):  # cards' LLM judge: neutral
            return json.dumps({"no_context_action": "read the code",
                               "with_context_action": "follow the memory", "action_shift": 0.5,
                               "necessity": 0.5, "expected_outcome_uplift": 0.5,
                               "negative_transfer_risk": 0.25, "reason": "related",
                               "confidence": 0.5})
        if system.startswith("You keep a coding assistant's memory consistent"):
            new = last.split("New facts:", 1)[-1]
            count = len(re.findall(r"^\s*\d+:", new, re.M))
            return json.dumps({"operations": [{"fact": i, "op": "ADD", "memory": -1,
                                               "text": ""} for i in range(count)]})
        if system.startswith("You manage the code context"):
            return '{"decision": "KEEP", "targets": []}'
        if system.startswith(("You help a coding assistant", "You keep the change log")):
            return "One sentence about the change."
        return self.baseline_reply(system, last, step)

    # -- the baselines' memory prompts (compact, amem, ldagent, memgpt): literal too ----------
    def baseline_reply(self, system: str, last: str, step: str | None = None) -> str | None:
        said = DEVELOPER.findall(last)
        facts = [f for line in said for f in prose_lines(line) if 12 < len(f) <= 300]
        previous = last.split("Previous summary:\n", 1)[-1].split("\n\n", 1)[0]
        kept = [line for line in previous.splitlines() if line and line != "(none yet)"]
        if system.startswith("You maintain the running summary"):  # compact
            lines = [line[2:] for line in kept if line.startswith("- ")]
            return json.dumps({"requirements": [*lines, *facts], "decisions": [],
                               "revisions": [], "open_errors": [], "code_written": []})
        if system.startswith("You keep the recursive summary"):  # memgpt
            return json.dumps({"summary": "\n".join([*kept, *(f"- {f}" for f in facts)])})
        if system.startswith("You summarise a finished session"):  # ldagent
            return json.dumps({"summary": " ".join(facts) or "Small talk."})
        if system.startswith("You extract personas"):
            return json.dumps({"developer": [], "assistant": []})
        if system.startswith("You index the notes"):  # amem
            named = NAMED.findall(last)
            return json.dumps({"keywords": named[:6] or ["conversation"],
                               "context": facts[0] if facts else "General", "tags": []})
        if system.startswith("You organise a coding assistant's memory notes"):
            shown = len(re.findall(r"^\[\d+\] ", last, re.M))  # neighbours, unchanged
            return json.dumps({"should_evolve": False, "actions": [], "suggested_connections": [],
                               "tags_to_update": [], "new_context_neighborhood": [""] * shown,
                               "new_tags_neighborhood": [[]] * shown})
        if step is not None:
            return self.memgpt_step(step, last)
        return None

    def memgpt_step(self, calls_shown: str, last: str) -> str:
        """Insert each statement of the developer's message into archival memory; at a
        task query, search archival memory for the function asked about (3 pages)."""
        calls = [json.loads(a) for a in re.findall(r"^Function call \w+\((\{.*?\})\)",
                                                   calls_shown, re.M)]
        name = self.asked.get(last)
        if name is not None:
            pages = [c["page"] for c in calls if c.get("query") == name]
            page = len(pages)
            if page >= 3:
                return json.dumps({"call": {"function": "answer"}})
            return json.dumps({"call": {"function": "archival_memory_search", "query": name,
                                        "page": page, "request_heartbeat": page < 2}})
        if last == TOPICS_QUERY:
            return json.dumps({"call": {"function": "answer"}})
        stored = {c.get("content") for c in calls}
        for fact in (f for f in prose_lines(last) if 12 < len(f) <= 300):
            if fact not in stored:
                return json.dumps({"call": {"function": "archival_memory_insert",
                                            "content": fact, "request_heartbeat": True}})
        return json.dumps({"call": {"function": "answer"}})


def said_names(item: Item) -> list[str]:
    """The builder's backticked names of ``item`` in the order its text (as said) names
    them, as whole names."""
    found = {}
    for name in set(CODE.findall(item.built)):
        hit = re.search(rf"(?<![\w/.]){re.escape(name)}(?![\w/])", item.text)
        if hit:
            found[name] = hit.start()
    return sorted(found, key=found.__getitem__)


def position(item: Item, said: str) -> int:
    """Where the item is last stated in ``said`` (every sentence of it present), else -1."""
    parts = [norm(p) for p in SENTENCE.split(item.text) if p.strip()]
    if not parts or any(p not in said for p in parts):
        return -1
    return said.rfind(parts[0])


def settled(sample: Sample, said: str) -> bool:
    """At least half of the true items are in the prompt, and each revised unit's latest
    statement is its true one."""
    true = [i for i in sample.items if i.truth]
    if not true or sum(position(i, said) >= 0 for i in true) * 2 < len(true):
        return False
    for item in true:
        stale = [o for o in sample.items if not o.truth and o.unit == item.unit]
        if stale and position(item, said) <= max(position(o, said) for o in stale):
            return False
    return True
