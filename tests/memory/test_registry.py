"""memory.registry: names -> lazy "module:attr" targets from an entry-point group and a
built-ins table, under its two policies (backends' and benchmarks')."""

from __future__ import annotations

import sys

import pytest

from memory.registry import EntryPointRegistry, RegistryError, UnknownName

GROUP = "engram.test_plugins"
BUILTINS = {"zeta": "json:dumps", "alpha": "json:loads"}


def distribution(site, name: str, entries: dict[str, str]) -> None:
    """A fake installed distribution ``name`` declaring ``entries`` in GROUP."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    (root / "plugmod.py").write_text("ONE = 1\nTWO = 2\n")
    monkeypatch.syspath_prepend(str(root))
    yield root
    sys.modules.pop("plugmod", None)


def test_backends_policy_sorted_conflicts_named_builtins_fill_in(site):
    distribution(site, "first", {"mine": "plugmod:ONE", "alpha": "plugmod:ONE"})
    distribution(site, "second", {"mine": "plugmod:TWO"})
    found = EntryPointRegistry(GROUP, BUILTINS)
    assert found.names() == ["alpha", "mine", "zeta"]
    assert found.spec("alpha").origin == "first"  # an entry point before the table
    assert found.spec("zeta").origin == "engram"
    with pytest.raises(RegistryError, match=r"'mine' is registered more than once: "
                                             r"plugmod:(ONE|TWO) \(\w+\), plugmod"):
        found.load("mine")
    assert "plugmod" not in sys.modules  # listing and refusing imported nothing


def test_benchmarks_policy_builtins_first_and_never_taken_over(site):
    distribution(site, "other", {"alpha": "plugmod:ONE", "beta": "plugmod:TWO"})
    found = EntryPointRegistry(GROUP, BUILTINS, builtins_first=True)
    assert found.names() == ["zeta", "alpha", "beta"]
    assert found.spec("alpha").target == "json:loads"
    assert found.load("beta") == 2 and found.spec("beta").origin == "other"


def test_unknown_and_unloadable_names_are_clear_errors(site):
    distribution(site, "broken", {"gone": "nowhere:X", "typo": "plugmod:THREE"})
    found = EntryPointRegistry(GROUP, {})
    with pytest.raises(UnknownName, match=r"unknown plug-in 'nope'; known plug-ins: gone, typo"):
        found.spec("nope")
    with pytest.raises(RegistryError, match=r"'gone' \(nowhere:X, from broken\) cannot be "
                                             r"loaded: No module named 'nowhere'"):
        found.load("gone")
    with pytest.raises(RegistryError, match=r"'typo' \(plugmod:THREE, from broken\)"):
        found.load("typo")



def test_engrams_own_backends_have_one_table_found_without_an_install(monkeypatch):
    """engram's backends are listed once, in BUILTINS: pyproject.toml declares none of
    them, and with no installed metadata at all (a source tree) the registry finds every
    one."""
    import tomllib
    from pathlib import Path

    import memory.registry
    from memory.backends import BUILTINS, Registry

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert "engram.backends" not in project["project"].get("entry-points", {})
    monkeypatch.setattr(memory.registry, "entry_points", lambda group: [])
    backends = Registry()
    assert backends.names() == sorted(BUILTINS)
    assert {backends.spec(name).origin for name in BUILTINS} == {"engram"}
    assert all(callable(backends.load(name)) for name in BUILTINS)
