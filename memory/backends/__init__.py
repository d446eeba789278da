"""The backend registry: names mapped to lazy ``module:Class`` targets.

Backends are found through the entry-point group ``engram.backends``; engram's
own are registered there too (pyproject.toml). Listing names imports nothing;
a backend's module is imported only when that backend is chosen. The registry's
machinery is ``memory.registry``, shared with replay's benchmarks.
"""

from __future__ import annotations

from memory.backends.base import Backend, BackendEnv
from memory.registry import EntryPointRegistry, RegistryError, Spec, UnknownName

GROUP = "engram.backends"
# engram's own backends: the one table of them (pyproject.toml does not repeat it), found
# the same from a source tree and an install; a third party's come through GROUP.
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


class UnknownBackend(UnknownName):
    """No backend of that name is registered."""


class BackendLoadError(RegistryError):
    """A registered backend could not be imported or built."""


BackendSpec = Spec  # a registered backend: name, "module:Class" target, origin


class Registry(EntryPointRegistry):
    """Backend names -> specs, discovered once from entry points (``memory.registry``:
    a name registered twice with different targets is an error naming both)."""

    kind = "backend"
    unknown = UnknownBackend
    failed = BackendLoadError

    def __init__(self, group: str = GROUP) -> None:
        super().__init__(group, BUILTINS)

    def create(self, name: str, env: BackendEnv) -> Backend:
        backend = self.load(name)(env)
        if not isinstance(backend, Backend):
            raise BackendLoadError(f"backend {name!r} does not implement the Backend protocol")
        return backend


registry = Registry()

__all__ = ["Backend", "BackendEnv", "BackendSpec", "Registry", "UnknownBackend", "registry"]
