from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.index.repo import IndexConfig, LocationRefused, RepoIndex
from memory.store import Store

from ...conftest import git, make_repo


def open_index(root: Path, embedder, **config) -> RepoIndex:
    return RepoIndex(root, Store(root.parent / "data" / "index.lance"), embedder,
                     IndexConfig(**config))


def test_functions_methods_and_classes_found_with_spans(demo_repo, embedder):
    index = open_index(demo_repo, embedder)
    report = index.refresh()
    assert report.files_changed == 4
    found = {c.location: (c.kind, c.start, c.end) for c in index.chunks()}
    assert found["app/forms.py::Form.validate_input"] == ("method", 15, 19)
    assert found["app/forms.py::Form"] == ("class", 7, 23)
    assert found["app/db.py::connect"] == ("function", 4, 6)
    assert found["README.md::Demo app/Install"][0] == "section"


def test_only_the_edited_file_is_re_embedded(demo_repo, counting_embedder):
    index = open_index(demo_repo, counting_embedder)
    index.refresh()
    first = len(counting_embedder.texts)
    assert first > 0
    counting_embedder.texts.clear()
    index.refresh()
    assert index.generation == 1  # nothing changed: what readers cached still holds
    (demo_repo / "app/db.py").write_text('"""DB."""\n\n\ndef close(conn):\n    """Close it."""\n')
    report = index.refresh()
    assert report.files_changed == 1 and index.generation == 2
    assert counting_embedder.texts, "the edited file must be re-embedded"
    assert all(t.startswith("app/db.py") for t in counting_embedder.texts)
    assert index.locate("app/db.py::close").exact
    assert index.locate("app/db.py::migrate") is None  # gone with the edit


def test_a_search_asked_again_is_answered_without_the_index_until_it_changes(
        demo_repo, counting_embedder):
    """The same search again (another backend of a replay, the other side of an A/B)
    embeds nothing and gives the same hits; after an edit and a refresh it sees the edit."""
    index = open_index(demo_repo, counting_embedder)
    index.refresh()
    counting_embedder.texts.clear()
    first = index.search("close the connection", 5)
    assert counting_embedder.texts == ["close the connection"]
    again = index.search("close the connection", 5)
    assert again == first and again is not first and counting_embedder.texts == [
        "close the connection"]
    assert index.search("close the connection", 3) == first[:3]  # another k: searched
    assert len(counting_embedder.texts) == 2
    assert "app/db.py::shut_down" not in {h.chunk.location for h in first}
    (demo_repo / "app/db.py").write_text(
        '"""DB."""\n\n\ndef shut_down(conn):\n    """Close the connection."""\n')
    index.refresh()
    after = index.search("close the connection", 5)
    assert "app/db.py::shut_down" in {h.chunk.location for h in after}


def test_reopen_embeds_nothing_and_keeps_the_chunks(demo_repo, counting_embedder):
    index = open_index(demo_repo, counting_embedder)
    index.refresh()
    total = len(index)
    counting_embedder.texts.clear()
    again = open_index(demo_repo, counting_embedder)
    assert len(again) == total
    assert again.refresh().chunks_embedded == 0
    assert counting_embedder.texts == []


def test_untracked_and_deleted_files(demo_repo, embedder):
    index = open_index(demo_repo, embedder)
    index.refresh()
    (demo_repo / "app/new.py").write_text("def fresh():\n    return 1\n")
    git(demo_repo, "rm", "-q", "app/db.py")
    report = index.refresh()
    assert report.files_removed == 1
    paths = {c.path for c in index.chunks()}
    assert "app/new.py" in paths and "app/db.py" not in paths


def test_docstring_phrase_finds_the_function_in_top_3(demo_repo, embedder):
    index = open_index(demo_repo, embedder)
    index.refresh()
    hits = index.search("apply schema migrations in order", k=3)
    assert "app/db.py::migrate" in [h.chunk.location for h in hits]
    hits = index.functions("turn a form into an HTML string", k=3)
    assert "app/forms.py::render_form" in [h.chunk.location for h in hits]
    assert all(h.chunk.kind in ("function", "method") for h in index.functions("form", 10))


def test_locate_exact_and_fuzzy(demo_repo, embedder):
    index = open_index(demo_repo, embedder)
    index.refresh()
    exact = index.locate("app/forms.py::Form.validate_input")
    assert exact.exact and exact.chunk.qualname == "Form.validate_input"
    bare = index.locate("validate_input")
    assert not bare.exact and bare.chunk.location == "app/forms.py::Form.validate_input"
    wrong_dir = index.locate("lib/forms.py::validate_input")
    assert not wrong_dir.exact
    assert wrong_dir.chunk.location == "app/forms.py::Form.validate_input"
    module = index.locate("app/db.py")
    assert module.exact and module.chunk.kind == "module"
    assert index.locate("no_such_function_anywhere") is None


def test_paths_escaping_the_repository_are_refused(demo_repo, embedder):
    index = open_index(demo_repo, embedder)
    index.refresh()
    with pytest.raises(LocationRefused):
        index.locate("../../etc/passwd")
    with pytest.raises(LocationRefused):
        index.locate("/etc/passwd::root")
    with pytest.raises(LocationRefused):
        index.locate("app/../../outside.py::f")


@pytest.mark.parametrize("location", ["app/forms.py\x00::Form", "app/\x00", "validate\x00input",
                                      "app/forms.py::Form\x1b[2J", "app/db\x7f.py",
                                      "a\nb.py::f"])
def test_nul_and_control_characters_are_refused_like_other_bad_locations(
        demo_repo, embedder, location):
    index = open_index(demo_repo, embedder)
    with pytest.raises(LocationRefused, match="control character"):
        index.locate(location)
    path = location.partition("::")[0]
    if path != "app/forms.py":
        with pytest.raises(LocationRefused, match="control character"):
            index.relative(path)


def test_binary_huge_and_vendored_files_are_skipped_with_reasons(tmp_path, embedder):
    root = make_repo(tmp_path / "r", {
        "ok.py": "def fine():\n    return 1\n",
        "blob.py": b"\x00\x01\x02binary",
        "huge.py": "x = 1\n" * 5000,
        "node_modules/lib/index.py": "def vendored():\n    pass\n",
        "logo.png": b"\x89PNG\r\n",
    })
    index = open_index(root, embedder, max_file_bytes=10_000)
    report = index.refresh()
    assert report.skipped["binary"] == 1
    assert report.skipped["too large"] == 1
    assert report.skipped["vendored"] == 1
    assert report.skipped["unsupported type"] == 1
    assert {c.path for c in index.chunks()} == {"ok.py"}
    assert "binary" in report.summary() and "too large" in report.summary()


def test_not_a_git_repo_is_a_clear_error(tmp_path, embedder):
    from memory._git import NotAGitRepo

    (tmp_path / "plain").mkdir()
    with pytest.raises(NotAGitRepo, match="not a git repository"):
        open_index(tmp_path / "plain", embedder)
    with pytest.raises(NotAGitRepo, match="no such folder"):
        open_index(tmp_path / "missing", embedder)


def test_in_process_vectors_rank_like_lancedb_and_follow_edits(demo_repo, embedder,
                                                               monkeypatch):
    import memory.index.repo as repo_module

    index = open_index(demo_repo, embedder)
    index.refresh()
    queries = ["apply schema migrations in order", "turn a form into an HTML string",
               "open a database connection", "validate user input"]
    mirrored = {q: [h.chunk.location for h in index.search(q, 8)] for q in queries}
    kinds = {q: [h.chunk.location for h in index.functions(q, 5)] for q in queries}
    monkeypatch.setattr(repo_module, "MIRROR_MAX_ROWS", 0)
    plain = open_index(demo_repo, embedder)
    assert plain._mirror is None and index._mirror is not None
    for q in queries:
        assert [h.chunk.location for h in plain.search(q, 8)] == mirrored[q], q
        assert [h.chunk.location for h in plain.functions(q, 5)] == kinds[q], q
    monkeypatch.undo()
    (demo_repo / "app" / "cache.py").write_text(
        'def evict_stale_entries(cache):\n    """Drop cache entries past their expiry time."""\n'
        "    return {k: v for k, v in cache.items() if not v.expired}\n")
    index.refresh()  # an untracked new file: the mirror must hold its vectors too
    hits = index.functions("drop expired cache entries", 3)
    assert hits[0].chunk.location == "app/cache.py::evict_stale_entries"
    assert hits[0].vector_rank == 0


class NoModel:
    """An embedder that must not be used: a no-change reopen loads no model."""

    name, dim = "minilm", 384

    def embed(self, texts, *, max_tokens=None):
        raise AssertionError(f"embedded {texts[:2]} on a no-change reopen")


def test_a_no_change_reopen_opens_no_table_and_loads_no_model(demo_repo, embedder):
    first = open_index(demo_repo, embedder).refresh()
    again = open_index(demo_repo, NoModel())
    report = again.refresh()
    assert (report.files_changed, report.chunks_embedded) == (0, 0)
    assert report.chunks_total == first.chunks_total and report.files_seen == first.files_seen
    assert again.store._connection is None and again._tables is None  # LanceDB untouched
    # an edit (untracked file) is seen by the next reopen, and the chunks are searchable
    (demo_repo / "app" / "extra.py").write_text("def shiny_new_helper():\n    return 2\n")
    changed = open_index(demo_repo, embedder).refresh()
    assert changed.files_changed == 1 and changed.chunks_total == first.chunks_total + 2
    reopened = open_index(demo_repo, NoModel())
    assert reopened.refresh().chunks_total == changed.chunks_total
    assert reopened.locate("shiny_new_helper").exact is False  # catalog read lazily


def test_the_manifest_never_hides_a_lost_or_reconfigured_index(demo_repo, embedder):
    import shutil

    index = open_index(demo_repo, embedder)
    total = index.refresh().chunks_total
    tiny = open_index(demo_repo, embedder, max_file_bytes=10).refresh()  # another config
    assert tiny.skipped["too large"] == 3 and tiny.files_removed == 3
    assert open_index(demo_repo, embedder).refresh().chunks_total == total
    shutil.rmtree(index.store.path / "chunks.lance")  # the chunk table is gone
    rebuilt = open_index(demo_repo, embedder).refresh()
    assert rebuilt.files_changed == 4 and rebuilt.chunks_total == total


def test_an_edit_to_one_function_embeds_that_function_only(tmp_path, embedder):
    """A changed file is chunked again, but a chunk whose key is unchanged keeps the
    vector the index holds (not embedded again), and the vectors are what embedding
    would give."""
    from tests.conftest import CountingEmbedder

    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(6))
    root = make_repo(tmp_path / "r", {"m.py": body})
    counting = CountingEmbedder(embedder)
    index = RepoIndex(root, Store(tmp_path / "d"), counting)
    index.refresh()
    (root / "m.py").write_text(body.replace("return x + 3", "return x - 3"))
    counting.texts.clear()
    report = RepoIndex(root, Store(tmp_path / "d"), counting).refresh()
    assert report.files_changed == 1 and report.chunks_embedded == len(counting.texts) <= 2
    assert any("x - 3" in text for text in counting.texts)  # the edited function, and
    assert not any("x + 1" in text for text in counting.texts)  # none of the others
    again = RepoIndex(root, Store(tmp_path / "d"), embedder)
    ids, matrix, _ = again.store.vectors(again._chunks)
    by_id = dict(zip(ids, matrix, strict=True))
    for chunk in again.chunks():
        fresh = embedder.embed([chunk.key], max_tokens=again.config.key_tokens)[0]
        assert float(by_id[chunk.id] @ fresh) > 0.99999


def test_a_build_in_parts_stores_every_chunk_with_its_own_vector(tmp_path, embedder,
                                                                 monkeypatch):
    """Chunks are embedded a part at a time and each part is written while the next one
    embeds: every chunk is stored once, with the vector of its own key; a write that
    fails stops the refresh with its error and leaves no manifest behind."""
    from tests.conftest import CountingEmbedder

    body, other = ("".join(f"def {name}{i}(x):\n    return x + {i}\n\n\n" for i in range(7))
                   for name in ("f", "g"))
    root = make_repo(tmp_path / "r", {"m.py": body, "n.py": other})
    counting = CountingEmbedder(embedder)
    index = RepoIndex(root, Store(tmp_path / "d"), counting, IndexConfig(embed_batch=3))
    report = index.refresh()
    assert report.chunks_total == report.chunks_embedded == len(counting.texts) == 16
    ids, matrix, _ = index.store.vectors(index._chunks)
    assert sorted(ids) == sorted(c.id for c in index.chunks()) and len(set(ids)) == 16
    by_id = dict(zip(ids, matrix, strict=True))
    for chunk in index.chunks():
        fresh = embedder.embed([chunk.key], max_tokens=index.config.key_tokens)[0]
        assert float(by_id[chunk.id] @ fresh) > 0.99999

    (root / "m.py").write_text(body + "def f7(x):\n    return x\n")
    again = RepoIndex(root, Store(tmp_path / "d"), embedder, IndexConfig(embed_batch=3))
    writes = 0
    add = Store.add

    def failing_add(table, rows):
        nonlocal writes
        writes += 1
        if writes == 2:
            raise OSError("disk full")
        add(table, rows)

    monkeypatch.setattr(Store, "add", staticmethod(failing_add))
    with pytest.raises(OSError, match="disk full"):
        again.refresh()
    assert not (tmp_path / "d" / "engram-files.json").exists()


def test_the_next_part_embeds_while_a_part_finishes(tmp_path, embedder):
    """A build does not wait for one part's embedding to end before the next part's
    starts (the embedder's threads would idle on a part's last batch): the first call
    returns only once the second has begun, and the index is whole."""
    import threading

    body = "".join(f"def f{i}(x):\n    return x * {i}\n\n\n" for i in range(8))
    root = make_repo(tmp_path / "r", {"m.py": body})
    second = threading.Event()
    calls: list[int] = []

    class Overlapping:
        name, dim = embedder.name, embedder.dim

        def embed(self, texts: list[str], *, max_tokens: int | None = None) -> Any:
            calls.append(len(texts))
            if len(calls) == 1:
                assert second.wait(30), "the next part never started"
            else:
                second.set()
            return embedder.embed(texts, max_tokens=max_tokens)

    index = RepoIndex(root, Store(tmp_path / "d"), Overlapping(), IndexConfig(embed_batch=3))
    report = index.refresh()
    assert len(calls) == 3 and report.chunks_total == report.chunks_embedded == 9
    assert sorted(c.qualname for c in index.chunks()) == ["", *sorted(f"f{i}" for i in range(8))]
