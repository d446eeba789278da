"""How the app was started (the command line's choices), shared by the app and its
controllers without either importing the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class AppOptions:
    repo: Path = Path(".")
    backend: str = "full"
    model: str | None = None
    data_dir: Path | None = None
    continue_last: bool = False
    pick_session: bool = False
    max_tokens: int = 512
    backend_options: dict[str, object] = field(default_factory=dict)  # --backend-opt
    timeout: float = 180.0  # seconds per LLM call (per try): --timeout, config "timeout"
    transcript: Path | None = None  # the session to resume (``--resume ID``), checked
    act: bool = True  # tools, edits and commands on the repository (tui/edits.py)
    auto_apply: bool | None = None  # apply edits without asking; None: config "auto_apply"
    commands: bool | None = None  # offer the run tool (consent, jail); None: config "commands"
    settings: Any = None  # memory.settings.Settings of the command line; None: current()
