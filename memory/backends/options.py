"""Backend hyperparameters given on the command line (``--backend-opt key=value``).

Every option a built-in backend reads from ``BackendEnv.options``, with its type and
what it does. A front-end parses ``key=value`` pairs here, so an unknown key or a
value of the wrong type is a clear error before anything slow starts. A third-party
backend's options are accepted under its own name as prefix (``mybackend_k=3``).
"""

from __future__ import annotations

from collections.abc import Iterable

OPTIONS: dict[str, tuple[type, str]] = {
    "shared_memory": (bool, "mem0/mem0r: one store per repository, not per session; "
                            "cards: its facts kept for the repository (engram mcp)"),
    "rag_top": (int, "rag: past turns retrieved (5)"),
    "mem0_top_k": (int, "mem0/mem0r: memories retrieved (10)"),
    "compact_share": (float, "compact: share of the window that triggers a compaction (0.8)"),
    "compact_turns": (int, "compact: compact past this many verbatim turns (0: off)"),
    "compact_keep_first": (int, "compact: first turns always kept verbatim (1)"),
    "compact_summary_tokens": (int, "compact: cap on the summary (512)"),
    "mask_keep": (int, "mask: recent turns kept unmasked (10)"),
    "mask_observations": (int, "mask: newest tool outputs shown whole (4)"),
    "amem_top_k": (int, "amem: notes retrieved, plus as many linked ones (5)"),
    "amem_neighbors": (int, "amem: nearest notes shown to the evolution step (5)"),
    "ldagent_session_turns": (int, "ldagent: close a session every N turns (0: idle gap only)"),
    "ldagent_session_gap": (float, "ldagent: idle seconds that close a session (3600)"),
    "memgpt_window": (int, "memgpt: main-context limit in tokens (0: 0.6 of the window)"),
    "memgpt_warning": (float, "memgpt: share of the limit that raises the pressure warning "
                              "(0.75)"),
    "memgpt_flush": (float, "memgpt: share of the queue evicted on overflow (0.5)"),
    "memgpt_block_limit": (int, "memgpt: characters per core memory block (2000)"),
    "cards_scorer": (str, "cards: utility scorer, proxy (deterministic) or llm (judge)"),
    "cards_packing": (str, "cards: post (select, then compress) or pre (compress first)"),
    "cards_max": (int, "cards: cards in a context at most (12)"),
    "cards_judge": (str, "cards: a model confirms uncertain revisions, off or llm"),
    "cards_facts": (str, "cards: statements the reading places kept as said, the model "
                         "picks facts among the others (read); the model reads every "
                         "message (llm); every statement kept as said, no call (said)"),
}
CHOICES: dict[str, tuple[str, ...]] = {
    "cards_scorer": ("proxy", "llm"),
    "cards_packing": ("post", "pre"),
    "cards_judge": ("off", "llm"),
    "cards_facts": ("read", "llm", "said"),
}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


class BackendOptionError(ValueError):
    """A ``--backend-opt`` that no backend reads, or a value of the wrong type."""


def _value(key: str, kind: type, raw: str) -> object:
    if kind is str:
        if raw not in CHOICES.get(key, (raw,)):
            raise BackendOptionError(f"--backend-opt {key}: {raw!r} is not one of "
                                     + ", ".join(CHOICES[key]))
        return raw
    if kind is bool:
        if raw.lower() in _TRUE + _FALSE:
            return raw.lower() in _TRUE
        raise BackendOptionError(f"--backend-opt {key}: {raw!r} is not true or false")
    try:
        value = kind(raw)
    except ValueError:
        raise BackendOptionError(f"--backend-opt {key}: {raw!r} is not "
                                 f"{'an integer' if kind is int else 'a number'}") from None
    if value < 0:
        raise BackendOptionError(f"--backend-opt {key}: {raw!r} is negative")
    return value


def parse_options(pairs: Iterable[str], backends: Iterable[str] = ()) -> dict[str, object]:
    """``["compact_turns=6", ...]`` -> ``{"compact_turns": 6}``. ``backends`` are the
    registered names: a key ``<name>_...`` of a backend engram does not ship passes as
    text."""
    from memory.backends import BUILTINS

    third_party = [b for b in backends if b not in BUILTINS]
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            raise BackendOptionError(f"--backend-opt {pair!r}: expected key=value")
        if key in OPTIONS:
            options[key] = _value(key, OPTIONS[key][0], raw)
        elif any(key.startswith(f"{b}_") for b in third_party):
            options[key] = raw
        else:
            raise BackendOptionError(f"unknown backend option {key!r}; known: "
                                     + ", ".join(OPTIONS))
    return options


def describe() -> str:
    """The options, one a line, for ``--help``."""
    return "\n".join(f"  {key:24} {kind.__name__:5}  {what}"
                     for key, (kind, what) in OPTIONS.items())
