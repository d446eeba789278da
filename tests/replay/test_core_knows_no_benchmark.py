"""replay's core, reporting and command line import no benchmark package: a benchmark brings
its options, config, report rows and tables through the ``Benchmark`` protocol
(``replay.benchmark``), found through the registry. Counted like the layering test counts:
every import that can run, lazy ones included, read with ``ast``."""

from __future__ import annotations

from tests.test_layering import ROOT, imports, modules

SHARED = ("replay.core", "replay.reporting", "replay.cli")
BENCHMARKS = ("replay.agentic", "replay.codeif", "replay.locoeval", "replay.longcodeqa",
              "replay.sessions", "replay.swecontext", "replay.locomo")


def test_the_core_reporting_and_cli_import_no_benchmark():
    mods = modules("replay")
    assert any(name.startswith("replay.locomo.") for name in mods)  # the scan sees them
    found = {}
    for name, path in mods.items():
        if not name.startswith(SHARED):
            continue
        bad = sorted(t for t in imports(name, path, set(mods))
                     if t.startswith(BENCHMARKS))
        if bad:
            found[name] = bad
    assert found == {}


def test_every_benchmark_package_is_listed():
    packages = {p.name for p in (ROOT / "replay").iterdir()
                if p.is_dir() and (p / "benchmark.py").exists()}
    assert {f"replay.{p}" for p in packages} == set(BENCHMARKS)


def test_the_core_reporting_and_cli_name_no_benchmark_key():
    """A benchmark's row keys (its main score, its columns) are named by the benchmark,
    never as a string in the shared code (chart.png's bar is the benchmarks' score_keys)."""
    import ast

    from replay.benchmark import benchmarks

    keys = {k for bench in benchmarks.all()
            for k in (*bench.score_keys, *(c[1] for c in bench.columns))}
    assert {"pass@1", "ca", "qa_all", "locomo_recall"} <= keys  # the benchmarks say them
    named = []
    for name, path in modules("replay").items():
        if name.startswith(SHARED):
            named += [(name, node.value) for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, ast.Constant) and node.value in keys]
    assert named == []
