"""Code against assert snippets, in the sandbox: which snippets pass."""

from __future__ import annotations

from replay.sandbox.sandbox import Limits, Sandbox


def run_tests(code: str, tests: list[str], limits: Limits) -> set[int]:
    """Indices of ``tests`` that ``code`` passes (none if it has no code or crashes)."""
    if not code.strip() or not tests:
        return set()
    with Sandbox(limits=limits) as box:  # the verdict comes from the harness's pipe
        return {int(i) for i in box.asserts(code, tests).passed}
