"""What the app's controllers may use of the app, as protocols (attributes down).

The controllers (background work, slash commands, A/B, steering, the palette) are handed
the app typed as one of these, never import it: the app imports them, not the reverse.
``EngramApp`` satisfies every protocol here; a test may hand a controller anything else
that does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from textual.notifications import SeverityLevel
from textual.worker import Worker

from tui.engine import EngineLoop
from tui.operations import Operations
from tui.options import AppOptions

W = TypeVar("W")


class Ui(Protocol):
    """The part of a Textual ``App`` the controllers call."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def query_one(self, selector: type[W]) -> W: ...

    def run_worker(self, work: Callable[[], Any], name: str | None = "", group: str = "default",
                   description: str = "", exit_on_error: bool = True, start: bool = True,
                   exclusive: bool = False, thread: bool = False) -> Worker[Any]: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any,
                           **kwargs: Any) -> bool: ...

    def push_screen(self, screen: Any, callback: Callable[[Any], Any] | None = None) -> Any: ...

    def run_action(self, action: str) -> Awaitable[bool]: ...

    def exit(self) -> None: ...


class Host(Ui, Protocol):
    """The app as its controllers see it: the UI, how it was started, the session's agent
    (None until the session is open), the engine loop that runs the agent's work, the slow
    operation under way."""

    options: AppOptions
    agent: Any  # memory.turn.agent.Agent once booted
    engine: EngineLoop
    operations: Operations


class SessionHost(Host, Protocol):
    """A host that knows where the session is recorded and which theme shows it."""

    home: Path | None
    session_id: str
    theme: str

    @property
    def available_themes(self) -> dict[str, Any]: ...


class PaletteHost(Protocol):
    """What the command palette offers and how it runs a choice."""

    @property
    def backend_name(self) -> str: ...

    def backend_names(self) -> list[str]: ...

    def theme_names(self) -> list[str]: ...

    async def run_slash(self, text: str) -> None: ...

    def prefill(self, text: str) -> None: ...
