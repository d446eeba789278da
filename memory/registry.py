"""Names mapped to lazy ``"module:attr"`` targets, found through an entry-point group.

One registry serves every kind of plug-in engram has: memory backends
(``engram.backends``, ``memory.backends.registry``) and replay's benchmarks
(``engram.benchmarks``, ``replay.benchmark.benchmarks``). A third party adds one by
declaring an entry point in its own distribution; engram's own are in one ``builtins``
table each (not repeated in ``pyproject.toml``), so a source tree that is not installed
finds them as an installed one does. Listing names imports nothing; ``load(name)`` imports
the one module that name points at.

Two policies, chosen by the kind of plug-in:

- ``builtins_first=False`` (backends): the entry points are read first; a name two
  distributions register with different targets is an error when it is used (naming
  both); the built-ins fill in the names no entry point gave; names are sorted.
- ``builtins_first=True`` (benchmarks, whose order breaks ties): the built-ins come
  first, in their table's order, and a built-in's name is never taken over; other
  entry points follow sorted by name, the first of a name kept.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

ENGRAM = "engram"  # the origin of a built-in


@dataclass(frozen=True)
class Spec:
    """One registered name."""

    name: str
    target: str  # "module:attr"
    origin: str  # the distribution that registered it


class RegistryError(RuntimeError):
    """A registered name that cannot be loaded, or one registered twice."""


class UnknownName(KeyError):
    """No entry of that name is registered."""

    def __str__(self) -> str:
        return str(self.args[0])


class EntryPointRegistry:
    """Names -> ``Spec``s, discovered once from ``group`` and ``builtins``.

    ``kind`` names the plug-in in messages ("backend", "benchmark"); ``unknown`` and
    ``failed`` are the errors raised for a name nobody registered and for one that
    cannot be loaded (or is registered twice), so each kind keeps its own types."""

    kind = "plug-in"
    unknown: type[Exception] = UnknownName
    failed: type[Exception] = RegistryError

    def __init__(self, group: str, builtins: Mapping[str, str], *,
                 builtins_first: bool = False) -> None:
        self.group = group
        self.builtins = builtins
        self.builtins_first = builtins_first
        self._specs: dict[str, Spec] | None = None
        self.conflicts: dict[str, list[Spec]] = {}

    def _entry_specs(self) -> list[Spec]:
        found = []
        for ep in entry_points(group=self.group):
            dist = getattr(getattr(ep, "dist", None), "name", "?") or "?"
            found.append(Spec(ep.name, ep.value, dist))
        return found

    def _discover(self) -> dict[str, Spec]:
        entries = self._entry_specs()
        specs: dict[str, Spec] = {}
        if self.builtins_first:
            specs = {name: Spec(name, target, ENGRAM) for name, target in self.builtins.items()}
            for spec in sorted(entries, key=lambda s: s.name):
                specs.setdefault(spec.name, spec)  # a built-in's name is never taken over
            return specs
        for spec in entries:
            have = specs.get(spec.name)
            if have is not None and have.target != spec.target:
                self.conflicts.setdefault(spec.name, [have]).append(spec)
                continue
            specs.setdefault(spec.name, spec)
        for name, target in self.builtins.items():
            specs.setdefault(name, Spec(name, target, ENGRAM))
        return dict(sorted(specs.items()))

    def specs(self) -> dict[str, Spec]:
        if self._specs is None:
            self._specs = self._discover()
        return self._specs

    def names(self) -> list[str]:
        return list(self.specs())

    def spec(self, name: str) -> Spec:
        specs = self.specs()
        if name not in specs:
            raise self.unknown(f"unknown {self.kind} {name!r}; known {self.kind}s: "
                               f"{', '.join(specs) or 'none'}")
        if name in self.conflicts:
            targets = ", ".join(f"{s.target} ({s.origin})" for s in self.conflicts[name])
            raise self.failed(f"{self.kind} {name!r} is registered more than once: {targets}")
        return specs[name]

    def load(self, name: str) -> Any:
        """The attribute ``name``'s target points at (its module imported now)."""
        spec = self.spec(name)
        module, _, attr = spec.target.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise self.failed(f"{self.kind} {name!r} ({spec.target}, from {spec.origin}) "
                              f"cannot be loaded: {exc}") from exc
