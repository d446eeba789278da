"""The backend registry: names mapped to lazy ``module:Class`` targets.

Backends are found through the entry-point group ``engram.backends``; engram's
own are registered there too (pyproject.toml). Listing names imports nothing;
a backend's module is imported only when that backend is chosen.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points

from memory.backends.base import Backend, BackendEnv

GROUP = "engram.backends"
# The same table as pyproject.toml's entry points, for a source tree that is not installed.
BUILTINS: dict[str, str] = {
    "full": "memory.backends.full:FullBackend",
    "empty": "memory.backends.empty:EmptyBackend",
    "rag": "memory.backends.rag:RagBackend",
    "mem0": "memory.backends.mem0:Mem0Backend",
    "mem0r": "memory.backends.mem0r:Mem0RBackend",
    "codemem": "memory.backends.codemem.backend:CodeMemBackend",
    "compact": "memory.backends.compact:CompactBackend",
    "mask": "memory.backends.mask:MaskBackend",
    "amem": "memory.backends.amem:AMemBackend",
    "ldagent": "memory.backends.ldagent:LDAgentBackend",
    "cards": "memory.backends.cards.backend:CardsBackend",
    "memgpt": "memory.backends.memgpt.backend:MemGPTBackend",
}


class UnknownBackend(KeyError):
    """No backend of that name is registered."""

    def __str__(self) -> str:
        return str(self.args[0])


class BackendLoadError(RuntimeError):
    """A registered backend could not be imported or built."""


@dataclass(frozen=True)
class BackendSpec:
    name: str
    target: str  # "module:Class"
    origin: str  # the distribution that registered it


class Registry:
    """Backend names -> specs, discovered once from entry points."""

    def __init__(self, group: str = GROUP) -> None:
        self.group = group
        self._specs: dict[str, BackendSpec] | None = None
        self.conflicts: dict[str, list[BackendSpec]] = {}

    def _discover(self) -> dict[str, BackendSpec]:
        specs: dict[str, BackendSpec] = {}
        for ep in entry_points(group=self.group):
            dist = getattr(getattr(ep, "dist", None), "name", "?") or "?"
            spec = BackendSpec(ep.name, ep.value, dist)
            have = specs.get(ep.name)
            if have is not None and have.target != spec.target:
                self.conflicts.setdefault(ep.name, [have]).append(spec)
                continue
            specs.setdefault(ep.name, spec)
        for name, target in BUILTINS.items():
            specs.setdefault(name, BackendSpec(name, target, "engram"))
        return dict(sorted(specs.items()))

    def specs(self) -> dict[str, BackendSpec]:
        if self._specs is None:
            self._specs = self._discover()
        return self._specs

    def names(self) -> list[str]:
        return list(self.specs())

    def spec(self, name: str) -> BackendSpec:
        specs = self.specs()
        if name not in specs:
            raise UnknownBackend(
                f"unknown backend {name!r}; known backends: {', '.join(specs) or 'none'}"
            )
        if name in self.conflicts:
            targets = ", ".join(f"{s.target} ({s.origin})" for s in self.conflicts[name])
            raise BackendLoadError(f"backend {name!r} is registered more than once: {targets}")
        return specs[name]

    def load(self, name: str) -> type:
        spec = self.spec(name)
        module_name, _, attr = spec.target.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise BackendLoadError(
                f"backend {name!r} ({spec.target}, from {spec.origin}) failed to load: {exc}"
            ) from exc

    def create(self, name: str, env: BackendEnv) -> Backend:
        backend = self.load(name)(env)
        if not isinstance(backend, Backend):
            raise BackendLoadError(f"backend {name!r} does not implement the Backend protocol")
        return backend


registry = Registry()

__all__ = ["Backend", "BackendEnv", "BackendSpec", "Registry", "UnknownBackend", "registry"]
