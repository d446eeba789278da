"""A benchmark registered by a third party through the ``engram.benchmarks`` entry-point
group (a fake installed distribution on ``sys.path``), run end to end by the CLI."""

from __future__ import annotations

import json
import sys

import pytest

from replay import benchmark
from replay.benchmark import BUILTINS, Benchmark, BenchmarkError, Benchmarks
from replay.cli.command import build_parser, main
from replay.core.sources import load_source
from replay.locoeval import DEMO

TOY = '''
from dataclasses import dataclass
from pathlib import Path

from replay.benchmark import BaseBenchmark, options_of


@dataclass(frozen=True)
class ToySet:
    id: str
    questions: tuple
    kind: str = "toy"


class ToyBenchmark(BaseBenchmark):
    name = "toy"

    def claims(self, probe):
        return 2 if probe.suffix == ".toy" else 0

    def load(self, path):
        lines = [x for x in Path(path).read_text().splitlines() if x.strip()]
        return [ToySet(Path(path).stem, tuple(lines))]

    def owns(self, source):
        return isinstance(source, ToySet)

    def add_arguments(self, parser):
        parser.add_argument_group("toy").add_argument(
            "--toy-hint", default="", help="toy: a hint added to every question")

    def options(self, args):
        return {"hint": args.toy_hint} if args.toy_hint else {}

    def summary(self, pairs):
        rows = [p["toy"] for p in pairs if p.get("toy")]
        return {"toy": {"hits": sum(r["hits"] for r in rows)}} if rows else {}

    async def drive(self, replay, source, name, repo, result, tick):
        agent = replay.agent(source, name, repo)
        hits = 0
        hint = options_of(replay.config, self.name).get("hint", "")
        for n, question in enumerate(source.questions):
            turn = await agent.ask(f"{question} {hint}".strip())
            if question == "boom":
                raise RuntimeError("the drive broke after its agent answered")
            hits += "42" in turn.assistant
            tick(n + 1, len(source.questions))
        result["toy"] = {"asked": len(source.questions), "hits": hits}
        return agent

    def report(self, summary):
        from rich.text import Text
        said = [Text("toy benchmark: " + str(summary["pairs"]) + " pairs")]
        if "toy" in summary:
            said.append(Text("toy hits: " + str(summary["toy"]["hits"])))
        return said

    def build(self, request):
        files = sorted(p.name for p in Path(request.repo).glob("*.py"))
        if not files:
            raise ValueError(f"{request.repo}: no Python file to ask about")
        Path(request.out).mkdir(parents=True, exist_ok=True)
        path = Path(request.out) / "built.toy"
        asked = files[: request.count or len(files)]
        path.write_text("".join(f"What does {name} compute?\\n" for name in asked))
        return [f"{len(asked)} questions: {path}"]


BENCHMARK = ToyBenchmark
'''


@pytest.fixture
def toy_installed(tmp_path, monkeypatch):
    """``toybench`` installed as a distribution whose entry point names its benchmark."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "toybench.py").write_text(TOY)
    info = site / "toybench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[engram.benchmarks]\ntoy = toybench:BENCHMARK\n")
    monkeypatch.syspath_prepend(str(site))
    registry = benchmark.benchmarks  # the one every module asks: discovered afresh
    monkeypatch.setattr(registry, "_specs", None)
    monkeypatch.setattr(registry, "_made", {})
    yield site
    sys.modules.pop("toybench", None)


def test_builtins_come_first_and_load_lazily():
    found = Benchmarks()
    assert found.names()[:len(BUILTINS)] == list(BUILTINS)
    assert all(isinstance(found.get(name), Benchmark) for name in BUILTINS)
    with pytest.raises(BenchmarkError, match="unknown benchmark 'nope'"):
        found.get("nope")


def test_the_demo_sources_go_to_their_benchmarks():
    found = Benchmarks()
    for path, name in ((DEMO / "outlines", "locoeval"),
                       (DEMO / "qa" / "inventory-qa.json", "longcodeqa"),
                       (DEMO / "experience" / "inventory-chains.json", "swecontext")):
        bench, _ = found.claim(path)
        assert bench is not None and bench.name == name, path
        assert found.of(load_source(path)[0]).name == name


def test_a_third_party_benchmark_runs_end_to_end(toy_installed, tmp_path, script, capsys):
    assert "toy" in benchmark.benchmarks.names()
    source = tmp_path / "quiz.toy"
    source.write_text("What is six times seven?\nAnd the answer again?\n")
    script.default = "It is 42."
    out = tmp_path / "run"
    code = main([str(source), "--backends", "full,empty", "--model", "scripted/t",
                 "--out", str(out), "--max-tokens", "64"])
    assert code == 0
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert {r["backend"] for r in rows} == {"full", "empty"}
    for row in rows:
        assert row["kind"] == "toy" and row["error"] is None
        assert row["toy"] == {"asked": 2, "hits": 2}
        assert row["turns"] == 2 and row["tokens"] > 0
    results = json.loads((out / "results.json").read_text())
    assert results["pairs"] == 2
    assert "toy benchmark: 2 pairs" in capsys.readouterr().out
    names = sorted(p.name for p in (out / "conversations").iterdir())
    assert names == ["quiz__empty.jsonl", "quiz__full.jsonl"]


def test_a_third_party_benchmark_brings_its_option_and_report_section(toy_installed, tmp_path,
                                                                     script, capsys):
    """Its CLI option reaches its drive through the run's config (as a value), its rows
    reach results.json and its section the report: nothing of it in the core."""
    source = tmp_path / "quiz.toy"
    source.write_text("What is six times seven?\n")
    script.default = lambda messages: ("It is 42." if "(think)" in messages[-1]["content"]
                                       else "No idea.")
    out = tmp_path / "run"
    assert main([str(source), "--backends", "empty", "--model", "scripted/t", "--out",
                 str(out), "--max-tokens", "64", "--toy-hint", "(think)"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["runs"][0]["toy"] == {"asked": 1, "hits": 1}
    assert results["toy"] == {"hits": 1} and results["config"]["toy_hint"] == "(think)"
    shown = capsys.readouterr().out
    assert "toy hits: 1" in shown
    assert "--toy-hint" in build_parser().format_help()  # listed with the others


def test_a_benchmark_that_cannot_load_is_a_clear_error(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[engram.benchmarks]\nbroken = nowhere:X\n")
    monkeypatch.syspath_prepend(str(site))
    found = Benchmarks()
    with pytest.raises(BenchmarkError, match=r"'broken' .*nowhere:X, from broken"):
        found.get("broken")


def test_a_third_party_benchmark_builds_its_sources_through_the_cli(toy_installed, tmp_path,
                                                                     script, capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("area.py", "calc.py", "tax.py"):
        (repo / name).write_text("def f():\n    return 42\n")
    out = tmp_path / "built"
    assert main(["build", str(repo), "--benchmark", "toy", "--out", str(out),
                 "--count", "2"]) == 0
    built = out / "built.toy"
    assert f"2 questions: {built}" in capsys.readouterr().out
    assert built.read_text().splitlines() == ["What does area.py compute?",
                                              "What does calc.py compute?"]
    # what it built is a source of its own, run end to end
    script.default = "It is 42."
    run = tmp_path / "run"
    assert main([str(built), "--backends", "empty", "--model", "scripted/t",
                 "--out", str(run), "--max-tokens", "64"]) == 0
    row = json.loads((run / "pairs.jsonl").read_text())
    assert row["kind"] == "toy" and row["toy"] == {"asked": 2, "hits": 2}
    # the hook's refusal is the command's clear error, nothing written
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["build", str(empty), "--benchmark", "toy", "--out", str(tmp_path / "x")]) == 2
    assert "engram replay build: " + f"{empty}: no Python file" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_building_with_a_benchmark_that_cannot_build_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", str(DEMO / "inventory"), "--benchmark", "codeif",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the codeif benchmark cannot build its sources from a repository" in err
    able = err.split("these can: ")[1].strip().split(", ")
    assert {"locoeval", "longcodeqa", "swecontext"} <= set(able) and "codeif" not in able
    assert main(["build", str(DEMO / "inventory"), "--benchmark", "nope",
                 "--out", str(out)]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # two benchmarks named: a usage error
        main(["build", str(DEMO / "inventory"), "--qa", "--experience", "--out", str(out)])
    assert not out.exists()


def test_a_pair_whose_drive_fails_keeps_what_its_agent_spent(toy_installed, tmp_path,
                                                            script):
    source = tmp_path / "quiz.toy"
    source.write_text("What is six times seven?\nboom\n")
    script.default = "It is 42."
    out = tmp_path / "run"
    main([str(source), "--backends", "full", "--model", "scripted/t", "--out", str(out),
          "--max-tokens", "64"])
    [row] = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert "the drive broke" in row["error"]
    assert row["tokens"] > 0 and row["usage"] and "structured" in row
    turns = [json.loads(line) for line in
             (out / "conversations" / "quiz__full.jsonl").read_text().splitlines()]
    assert sum(t.get("type") == "turn" for t in turns) == 2


def test_engrams_own_benchmarks_have_one_table_found_without_an_install(monkeypatch):
    """engram's benchmarks are listed once, in BUILTINS (their order breaks ties):
    pyproject.toml declares none of them, and with no installed metadata at all (a
    source tree) the registry finds every one, in that order."""
    import tomllib
    from pathlib import Path

    import memory.registry
    from replay.benchmark import BUILTINS, Benchmarks

    project = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert "engram.benchmarks" not in project["project"].get("entry-points", {})
    monkeypatch.setattr(memory.registry, "entry_points", lambda group: [])
    found = Benchmarks()
    assert found.names() == list(BUILTINS)
    assert all(found.load(name).name == name for name in BUILTINS)
