"""The command-palette provider: every slash command, backends and themes."""

from __future__ import annotations

from functools import partial
from typing import cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.host import PaletteHost
from tui.slash import COMMANDS


def model_aliases() -> list[str]:
    """The config's model aliases (none when the config cannot be read)."""
    from memory.llm.models import ModelConfigError, aliases

    try:
        return list(aliases())
    except ModelConfigError:
        return []


class EngramCommands(Provider):
    """Every slash command in the palette; those with arguments list their choices."""

    @property
    def engram(self) -> PaletteHost:
        """The app this palette is open in, as far as the palette needs it."""
        return cast(PaletteHost, self.app)

    def _entries(self) -> list[tuple[str, str, object]]:
        app = self.engram
        entries: list[tuple[str, str, object]] = []
        for name in app.backend_names():
            entries.append((f"Backend: {name}", f"/backend {name}",
                            partial(app.run_slash, f"/backend {name}")))
            if name != app.backend_name:  # never a backend against itself
                entries.append((f"A/B: {app.backend_name} vs {name}",
                                f"/ab {app.backend_name} {name}",
                                partial(app.run_slash, f"/ab {app.backend_name} {name}")))
        for alias in model_aliases():
            entries.append((f"Model: {alias}", f"/model {alias}",
                            partial(app.run_slash, f"/model {alias}")))
        for theme in app.theme_names():
            entries.append((f"Theme: {theme}", f"/theme {theme}",
                            partial(app.run_slash, f"/theme {theme}")))
        for command in COMMANDS:
            if command.args and command.args != "[PATH]":
                entries.append((f"/{command.name} {command.args}", command.help,
                                partial(app.prefill, f"/{command.name} ")))
            else:
                entries.append((f"/{command.name}", command.help,
                                partial(app.run_slash, f"/{command.name}")))
        return entries

    async def discover(self) -> Hits:
        for title, help_, callback in self._entries():
            yield DiscoveryHit(title, callback, help=help_)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_)  # type: ignore[arg-type]
