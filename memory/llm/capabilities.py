"""What a model is offered beside the conversation: the repository tools (the tool loop)
and the edit format. A profile per model, from what is known of it, else its config
alias:

- the embedded models (``local/...``: SmolLM2-135M) are offered neither. They cannot
  follow either (0 of 16 edits applied in our own measure; in the app the 135M model
  asked to run test files as commands and answered with malformed edit blocks), so
  they answer from the code the memory backend retrieves;
- a served or API model is offered both;
- a config alias says otherwise with ``"tools"`` / ``"edits"`` (true or false), e.g. an
  alias of the embedded model with ``"tools": true`` to try the tool loop on it.

The structured mode of the model's calls (memory/llm/structured.py) follows its route, as
before: the embedded model decodes under a grammar, a server steps down through its modes.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.llm.models import aliases, resolve

ENABLE = ("to let the assistant read files, run commands in the sandbox and propose "
          "edits, choose a served or API model: /model NAME in the app, --model NAME, or "
          "a config alias (docs/user-guide.md, 'Edits, commands and /undo')")


@dataclass(frozen=True)
class Capabilities:
    """What one model is offered; ``source`` says where that came from (known | config)."""

    tools: bool = True
    edits: bool = True
    source: str = "known"
    why: str = "a served or API model"

    @property
    def limited(self) -> bool:
        return not (self.tools and self.edits)

    def notice(self, model: str) -> str:
        """One line for the developer when something is not offered (else "")."""
        if not self.limited:
            return ""
        off = [what for what, on in (("tools", self.tools), ("edits", self.edits)) if not on]
        return (f"{model} is offered no {' and no '.join(off)} ({self.why}): it answers from "
                f"the repository's code; {ENABLE}")


EVERYTHING = Capabilities()
EMBEDDED = Capabilities(False, False, "known",
                        "an embedded small model cannot follow tools or the edit format")


def capabilities_of(model: str) -> Capabilities:
    """The profile of ``model`` (a model string or a config alias)."""
    name = model.strip()
    entry = aliases().get(name) if name and "/" not in name else None
    known = EMBEDDED if resolve(name).model.startswith("local/") else EVERYTHING
    if entry is None or not ({"tools", "edits"} & set(entry)):
        return known
    return Capabilities(tools=bool(entry.get("tools", known.tools)),
                        edits=bool(entry.get("edits", known.edits)), source="config",
                        why=f"as the config's alias {name!r} says")
