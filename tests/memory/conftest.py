"""Fixtures of the cards tests: a small indexed repository and a cards environment."""

from __future__ import annotations

import pytest

from memory.backends import BackendEnv
from memory.index.repo import RepoIndex
from memory.llm.client import LLM, LLMConfig
from memory.store import Store
from tests.conftest import DB, FORMS, make_repo


@pytest.fixture
def repo_index(tmp_path, embedder):
    root = make_repo(tmp_path / "repo", {"app/forms.py": FORMS, "app/db.py": DB})
    index = RepoIndex(root, Store(tmp_path / "data" / "index.lance"), embedder)
    index.refresh()
    return index


@pytest.fixture
def cards_env(tmp_path, embedder, repo_index, script):
    def build(**options):
        return BackendEnv(llm=LLM(LLMConfig(model="scripted/t")), embedder=embedder,
                          repo=repo_index, data_dir=tmp_path / "home", session_id="s1",
                          options=options)
    return build
