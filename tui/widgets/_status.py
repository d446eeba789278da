"""The status line: repository, branch, HEAD, model, backend, index readiness, tokens, cost."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


class StatusBar(Static):
    """One line of facts about the session; the app sets its attributes."""

    DEFAULT_CSS = "StatusBar { height: 1; padding: 0 1; }"

    repo: reactive[str] = reactive("")
    """Repository name."""
    branch: reactive[str] = reactive("")
    """Current branch."""
    head: reactive[str] = reactive("")
    """HEAD commit (short)."""
    model: reactive[str] = reactive("")
    """The model answering."""
    model_loading: reactive[bool] = reactive(False)
    """The embedded model is loading in the background."""
    backend: reactive[str] = reactive("")
    """The memory backend."""
    last_tokens: reactive[int] = reactive(0)
    """Tokens of the last turn (all purposes)."""
    session_tokens: reactive[int] = reactive(0)
    """Tokens of the whole session."""
    cost: reactive[float] = reactive(0.0)
    """Cost in USD where litellm knows the model's prices."""
    index: reactive[str] = reactive("")
    """The repository index: "…" (not opened yet), "3/120" (building), "ready", "failed"."""
    memory: reactive[str] = reactive("")
    """Memory updates skipped or failed ("memory: 2 skipped"); "" when all went through."""
    acting: reactive[str] = reactive("")
    """What the model is not offered, when it is limited ("answers from the code")."""
    instructions: reactive[str] = reactive("")
    """The project's instructions passing the window ("instructions over by 1,200 tok")."""
    note: reactive[str] = reactive("")
    """A short state note (indexing progress, catching up)."""

    def render(self) -> str:
        parts = [f"{self.repo} {self.branch}@{self.head}" if self.repo else "engram",
                 f"model {self.model}" + (" (loading…)" if self.model_loading else ""),
                 f"backend {self.backend}"]
        if self.acting:
            parts[1] += f" ({self.acting})"
        if self.index:
            parts.append(f"index {self.index}")
        parts += [f"last {self.last_tokens} tok", f"session {self.session_tokens} tok"]
        if self.cost:
            parts.append(f"${self.cost:.4f}")
        if self.memory:
            parts.append(f"⚠ {self.memory}")
        if self.instructions:
            parts.append(f"⚠ {self.instructions}")
        if self.note:
            parts.append(self.note)
        return " │ ".join(parts)
