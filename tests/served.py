"""llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) serving the
shipped SmolLM2 GGUF on a free loopback port: a real self-hosted endpoint for tests and
benchmarks. Its dependencies are engram's ``server`` extra (in ``dev``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

READY_SECONDS = 120.0


class ServerError(RuntimeError):
    """The server did not come up; the message holds the end of its log."""


@dataclass(frozen=True)
class Served:
    base: str  # http://127.0.0.1:PORT/v1
    model: str  # the model string engram is given
    log: Path
    pid: int


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/models", timeout=2) as answer:
            return int(answer.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def llama_server(folder: Path, *, context: int = 8192,
                 threads: int | None = None) -> Iterator[Served]:
    """The server, started and ready, stopped when the block ends (each caller its own
    port: pytest-xdist workers each start one). ``threads``: the embedded model's
    (``ENGRAM_LLM_THREADS``, else one per core)."""
    from memory.llm.local import local_threads, weights_path

    threads = threads or local_threads()
    gguf = weights_path("smollm2")  # the weights engram's embedded model loads
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    for attempt in range(3):  # a port taken between our probe and its bind: another one
        port = free_port()
        log = folder / f"llama-server-{port}.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
                 "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context),
                 "--n_threads", str(threads), "--verbose", "False",
                 # no logits kept for every prompt token (its default, for logprobs engram
                 # never asks): n_ctx x vocabulary floats (1.6 GB) written on each prompt
                 # and scanned on each prompt state it resumes from
                 "--logits_all", "False",
                 # prompt states kept, as vLLM's prefix caching and engram's embedded
                 # model keep them; the server counts only their KV part (not the 100 MB
                 # of logits each keeps beside), so 96 MB of its count is about 1 GB
                 "--cache", "True", "--cache_type", "ram", "--cache_size", str(96 << 20)],
                stdout=out, stderr=subprocess.STDOUT, env=env)
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + READY_SECONDS
        while proc.poll() is None and time.monotonic() < deadline and not _ready(base):
            time.sleep(0.3)
        if proc.poll() is None and _ready(base):
            break
        _stop(proc)
        if attempt == 2 or "address already in use" not in log.read_text().lower():
            raise ServerError(f"llama_cpp.server did not start (exit {proc.returncode}); "
                              f"its log ends:\n{log.read_text()[-2000:]}")
    try:
        yield Served(base=base, model="openai/smollm2", log=log, pid=proc.pid)
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


# What the developer says in the served 6-turn chats (tests and tests/bench_served.py).
STATEMENTS = [
    "We use PostgreSQL 15 for the app database; connect in app/db.py opens it.",
    "connect in app/db.py must use a timeout of 10 seconds, not 5.",
    "Always validate emails with validate_input in app/forms.py before saving a form.",
    "Our team deploys on Fridays, so every migration must be reversible.",
    "I prefer type hints on every public function.",
    "render_form in app/forms.py has to escape HTML in the field values.",
]
