"""No module under memory/ (but the settings loader), replay/ or tui/ reads a setting
from the process environment: settings travel as a value (memory/settings.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOADER = "memory/settings.py"
# (module, variable) read from the environment on purpose, and why it is not a setting
ALLOWED = {
    # the jail's guard runs in the child the sandbox starts; the parent sets these for it
    ("memory/acting/jail/_guard.py", "ENGRAM_SANDBOX_ROOT"),
    ("memory/acting/jail/_guard.py", "ENGRAM_SANDBOX_NPROC"),
    # file descriptors the sandbox runner's parent hands to that one child process
    ("replay/sandbox/_runner.py", "ENGRAM_RUNNER_FD"),
    ("replay/sandbox/_verdict.py", "ENGRAM_VERDICT_FDS"),
    # the runner hands its zygote a socket, and the path its test processes put back
    ("replay/sandbox/_zygote.py", "ENGRAM_ZYGOTE_FD"),
    ("replay/sandbox/_zygote.py", "ENGRAM_ZYGOTE_PYTHONPATH"),
}


def _env_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, variable or "?") of each os.environ[...] load, os.environ.get/pop(...) and
    os.getenv(...)."""

    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ"
                and isinstance(node.value, ast.Name) and node.value.id == "os")

    def name_of(node: ast.AST | None) -> str:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
            else "?"

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_environ(node.value) \
                and isinstance(node.ctx, ast.Load):
            found.append((node.lineno, name_of(node.slice)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            first = node.args[0] if node.args else None
            reads = func.attr in ("get", "pop") and is_environ(func.value)
            getenv = func.attr == "getenv" and isinstance(func.value, ast.Name) \
                and func.value.id == "os"
            if reads or getenv:
                found.append((node.lineno, name_of(first)))
    return found


def test_no_module_reads_a_setting_from_the_environment() -> None:
    offenders = []
    for package in ("memory", "replay", "tui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == LOADER:
                continue
            for line, name in _env_reads(ast.parse(path.read_text(), rel)):
                if (rel, name) not in ALLOWED:
                    offenders.append(f"{rel}:{line} reads ${name}")
    assert not offenders, ("read settings from memory.settings (a value), not the "
                           "environment:\n" + "\n".join(offenders))


def test_the_scan_sees_each_way_of_reading() -> None:
    source = ("import os\nos.environ['A']\nos.environ.get('B')\nos.getenv('C')\n"
              "os.environ.pop('D', '')\nos.environ['E'] = '1'\n")
    assert [name for _, name in _env_reads(ast.parse(source))] == ["A", "B", "C", "D"]
