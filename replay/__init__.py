"""engram's replay bench: a core every benchmark shares, and one package per benchmark.

- ``core``: the run loop (``Replay``, ``ReplayConfig``), executors (local, Ray), rate limits,
  cost, output, metrics, and ``sources`` (which benchmark claims a file or folder).
- ``sandbox``: where generated code and its tests run (the jail and the verdict harness).
- ``reporting``: tables, charts, the HTML page, merging runs.
- ``cli``: ``engram replay`` and its subcommands.
- the benchmarks: ``locoeval`` (LoCoEval-style outlines, their builder, mock users, judge,
  oracle, the bundled demo), ``codeif`` (CodeIF-Bench iterative instructions),
  ``longcodeqa`` (LongCodeQA questions), ``swecontext`` (SWE-ContextBench task chains),
  ``sessions`` (recorded sessions of engram, Claude Code, Codex CLI, Aider).
- ``benchmark``: the interface each benchmark implements, and their registry.
"""
