"""The embedded model's weights converted once to a layout llama.cpp reads prompts fast
in: where the copy lies, when it is made, what happens when it cannot be, and that it is
still the shipped model (real llama.cpp, real GGUF files)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from memory.llm.local import LocalModelError, gguf_path, weights_path
from memory.llm.local import weights as weights_module
from memory.llm.local.model import LocalModel
from memory.llm.local.weights import converted_path, log_probs


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENGRAM_LOCAL_WEIGHTS", raising=False)
    return tmp_path / "home"


def test_the_shipped_weights_are_converted_once_into_the_cache(home: Path) -> None:
    path = weights_path("smollm2")
    assert path.parent == home / "cache" / "models"
    assert path == converted_path("smollm2")
    assert path.read_bytes()[:4] == b"GGUF"
    shipped = gguf_path("smollm2").stat().st_size
    # Q8_0 takes about 8.5 bits a weight where Q4_1 takes 5
    assert 1.3 * shipped < path.stat().st_size < 2 * shipped
    made = path.stat().st_mtime_ns
    assert weights_path("smollm2") == path
    assert path.stat().st_mtime_ns == made  # found, not made again
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no partial file left


@pytest.mark.slow  # loads the embedded model
def test_the_shipped_file_on_request_and_a_bad_setting_said(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_LOCAL_WEIGHTS", "shipped")
    assert weights_path("smollm2") == gguf_path("smollm2")
    assert not (home / "cache" / "models").exists()
    monkeypatch.setenv("ENGRAM_LOCAL_WEIGHTS", "q2")
    with pytest.raises(LocalModelError, match="ENGRAM_LOCAL_WEIGHTS='q2': use one of fast"):
        weights_path("smollm2")
    with pytest.raises(LocalModelError, match="ENGRAM_LOCAL_WEIGHTS"):
        LocalModel("smollm2")


def test_a_failed_conversion_loads_the_file_as_it_is(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model at all" * 100)
    monkeypatch.setattr(weights_module, "gguf_path", lambda name: broken)
    with caplog.at_level(logging.WARNING, logger="memory.llm.local.weights"):
        assert weights_path("smollm2") == broken
    assert "converting broken.gguf to q8_0 failed" in caplog.text
    assert "loading the shipped weights" in caplog.text
    assert list((home / "cache" / "models").iterdir()) == []  # nothing half-written


@pytest.mark.slow  # loads the embedded model
def test_a_damaged_copy_is_dropped_and_the_shipped_file_loads(home: Path) -> None:
    copy = converted_path("smollm2")
    assert copy is not None
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"GGUF" + b"\0" * 64)  # cut short
    model = LocalModel("smollm2")
    try:
        assert model.path == gguf_path("smollm2")
        assert not copy.exists()
        assert model.tokens("def f(): pass")
    finally:
        model.llama.close()


def test_the_converted_copy_predicts_as_the_shipped_model(home: Path) -> None:
    """The same model: next-token distributions over a real file of this repository
    within a small KL divergence, and mostly the same most likely token (a conversion to
    Q4_0, which re-rounds every weight, measured 0.30 nats and 70 % here)."""
    from llama_cpp import Llama

    text = Path(__file__).read_text()[:2000]
    tokens = Llama(model_path=str(gguf_path("smollm2")), vocab_only=True,
                   verbose=False).tokenize(text.encode())[:256]
    shipped = log_probs(gguf_path("smollm2"), tokens)
    converted = log_probs(weights_path("smollm2"), tokens)
    kl = float(np.mean((np.exp(shipped) * (shipped - converted)).sum(axis=1)))
    agree = float(np.mean(shipped.argmax(axis=1) == converted.argmax(axis=1)))
    assert kl < 0.03, kl
    assert agree > 0.85, agree
