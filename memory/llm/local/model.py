"""One loaded GGUF chat model on llama.cpp: its prompt, its grammar, its generation.

A call that passes a JSON Schema (``response_format``) decodes under the grammar
llama.cpp builds from that schema, so its output always parses. Free text is sampled as
the model's ``Sampling`` says; a whole-text call stops when its text repeats itself
(``memory.llm.repetition``); a stream is watched by its consumer. ``cancel`` set stops the
generation at the next token.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memory.llm.local.spec import (
    GRAMMAR_CACHE,
    LOCAL_MODELS,
    MODEL_CONTEXT_LENGTH,
    LocalModelError,
    Sampling,
    engine_available,
    gguf_path,
    local_context_window,
    local_threads,
)
from memory.llm.local.weights import forget, weights_path
from memory.llm.repetition import Repetition, RepetitionDetector, kept


def escape_backslashes() -> None:
    """llama-cpp-python 0.3's JSON-Schema converter escapes a quote but not a backslash in
    a grammar literal: a ``const`` or ``enum`` string holding a quote (JSON ``\\"``) came
    out as ``\\\\"``, which ends the literal early; llama.cpp then rejected the grammar and
    crashed decoding under it (a developer's statement with a quote, offered as one of
    the facts to pick). Its literal escapes get the backslash too (idempotent)."""
    import re

    from llama_cpp import llama_grammar

    if "\\" not in llama_grammar.GRAMMAR_LITERAL_ESCAPES:
        llama_grammar.GRAMMAR_LITERAL_ESCAPES["\\"] = "\\\\"
        llama_grammar.GRAMMAR_LITERAL_ESCAPE_RE = re.compile(r'[\r\n"\\]')


STATE_CACHE_BYTES = 512 << 20
# Tokens per llama.cpp decode call. llama-cpp-python keeps n_batch x vocabulary floats of
# logits and copies them into every prompt state it saves (after each call): 96 MB at its
# default 512, 24 MB at 128 (SmolLM2, one core: a state saved in 75-137 ms instead of
# 243-460 ms; prompts evaluated at the same 140-150 tokens/s).
BATCH_TOKENS = 128


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    repeated: Repetition | None = None  # the text looped and was stopped (and cut) there


class LocalModel:
    """One loaded GGUF chat model; generation is serialized (one CPU, one model)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}
        gguf_path(name)  # an unknown or missing model says so before anything loads
        if not engine_available():
            raise LocalModelError(
                "the embedded model runs on llama.cpp: pip install llama-cpp-python "
                "(it builds from source; `make` in engram's checkout does it for you)")
        # llama.cpp's OpenMP workers spin while they wait; on a busy machine (2 cores,
        # other work) spinning threads starve each other: 0.8 vs 21 tokens/s measured.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        _keep_standard_streams()

        threads = local_threads()
        self.window = local_context_window()
        self.sampling = LOCAL_MODELS[name].sampling
        self.path = weights_path(name)
        while True:
            try:
                self.llama = self._load(self.path, threads)
                break
            except Exception as exc:  # llama.cpp reports a bad file as ValueError/RuntimeError
                if not forget(self.path, name):
                    raise LocalModelError(
                        f"could not load the embedded model {name!r}: {exc}") from exc
                self.path = gguf_path(name)  # a damaged converted copy is gone: the shipped file
        # states of recent prompts, by their tokens: a call resumes from the longest prefix
        # it shares with any of them, not only with the call just before (a memory's turn
        # alternates answer, extraction and update prompts, each with its own long prefix)
        self.llama.set_cache(_state_cache(STATE_CACHE_BYTES))
        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise LocalModelError(f"{self.path.name} carries no chat template")
        import jinja2

        self._template = jinja2.Environment(autoescape=False).from_string(template)
        self._stop = ["<|im_end|>", "<|endoftext|>"]

    def _load(self, path: Path, threads: int) -> Any:
        from llama_cpp import Llama

        return Llama(model_path=str(path), n_ctx=self.window,
                     n_threads=threads, n_threads_batch=threads, seed=0,
                     n_batch=BATCH_TOKENS, last_n_tokens_size=self.sampling.last_n,
                     flash_attn=True, verbose=False)  # 1.7x faster prompts

    # -- prompt -----------------------------------------------------------------------
    def render(self, messages: list[dict[str, Any]]) -> str:
        clean = [{"role": m["role"], "content": _content(m)} for m in messages]
        return self._template.render(messages=clean, add_generation_prompt=True)

    def tokens(self, text: str) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def fit(self, prompt: str, max_new: int) -> int:
        """Tokens of the prompt; raises if prompt + answer cannot fit the window."""
        n = len(self.tokens(prompt))
        if n + max_new > self.window:
            raise LocalModelError(
                f"prompt of {n} tokens + {max_new} to generate exceeds the "
                f"{self.window}-token window of {self.name} (ENGRAM_LOCAL_CONTEXT, "
                f"up to {MODEL_CONTEXT_LENGTH})"
            )
        return n

    def grammar(self, response_format: Any) -> Any:
        """The llama.cpp grammar for a litellm/OpenAI ``response_format``, or None."""
        if not isinstance(response_format, dict):
            return None
        kind = response_format.get("type")
        if kind == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema") or {}
        elif kind == "json_object":
            schema = response_format.get("schema") or {}
        else:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            if len(self._grammars) >= GRAMMAR_CACHE:
                self._grammars.pop(next(iter(self._grammars)))
            escape_backslashes()
            try:
                self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception as exc:
                raise LocalModelError(f"cannot build a grammar from the schema: {exc}") from exc
        return self._grammars[key]

    def sampling_for(self, params: dict[str, Any], constrained: bool) -> Sampling:
        """A call's samplers. Under a grammar: the caller's temperature (0: greedy), no
        penalty (JSON repeats its quotes and commas by nature). Free text: the model's
        ``Sampling``, at the caller's temperature when it asks for more than 0."""
        temperature = float(params.get("temperature") or 0.0)
        if constrained:
            return Sampling(temperature=temperature, top_k=40 if temperature else 1)
        if temperature > 0:
            return replace(self.sampling, temperature=temperature)
        return self.sampling

    # -- generation ---------------------------------------------------------------------
    def generate(self, messages: list[dict[str, Any]], params: dict[str, Any],
                 cancel: threading.Event | None = None) -> Generation:
        """The whole text of one call; free text that starts repeating itself is stopped
        there and cut after its first copy (``Generation.repeated`` says so)."""
        free = self.grammar(params.get("response_format")) is None
        guard = RepetitionDetector() if free else None
        text, prompt, completion = self._collect(self.stream(messages, params, cancel, guard))
        if guard is not None and (found := guard.finish()) is not None:
            return Generation(kept(text, found), prompt, completion, found)
        return Generation(text, prompt, completion)

    def stream(self, messages: list[dict[str, Any]], params: dict[str, Any],
               cancel: threading.Event | None = None,
               guard: RepetitionDetector | None = None) -> Iterator[Any]:
        """Yield text pieces as they are generated; the last item is a (prompt, completion) pair.

        ``cancel`` set (the caller gave up: Esc in the app) stops llama.cpp at the next
        token and frees the model for the next call; so does ``guard`` finding that the
        text repeats itself."""
        prompt = self.render(messages)
        max_new = int(params.get("max_tokens") or 512)
        prompt_tokens = self.fit(prompt, max_new)
        grammar = self.grammar(params.get("response_format"))
        sampling = self.sampling_for(params, constrained=grammar is not None)
        parts: list[str] = []
        with self._lock:
            try:
                pieces = self.llama.create_completion(
                    prompt, max_tokens=max_new, stream=True, grammar=grammar,
                    stop=self._stop, seed=int(params.get("seed") or 0),
                    **sampling.completion_args())
                try:
                    for chunk in pieces:
                        if cancel is not None and cancel.is_set():
                            break
                        piece = chunk["choices"][0].get("text") or ""
                        if piece:
                            parts.append(piece)
                            yield piece
                            if guard is not None and guard.feed(piece) is not None:
                                break
                finally:
                    pieces.close()  # llama.cpp stops generating
            except LocalModelError:
                raise
            except Exception as exc:
                raise LocalModelError(f"generation failed: {exc}") from exc
        completion = len(self.tokens("".join(parts))) if parts else 0
        yield (prompt_tokens, completion)

    @staticmethod
    def _collect(stream: Iterator[Any]) -> tuple[str, int, int]:
        parts: list[str] = []
        prompt = completion = 0
        for item in stream:
            if isinstance(item, tuple):
                prompt, completion = item
            else:
                parts.append(item)
        return "".join(parts), prompt, completion


class _Unsilenced:
    """Stands in for llama-cpp-python's ``suppress_stdout_stderr``, which points fds 1
    and 2 (and ``sys.stdout``/``sys.stderr``) at /dev/null process-wide while it loads:
    a thread printing meanwhile (the app drawing, an answer streaming) lost its output.
    With ``verbose=False`` its log callback already drops llama.cpp's chatter."""

    def __init__(self, disable: bool = True) -> None:
        self.disable = disable

    def __enter__(self) -> _Unsilenced:
        return self

    def __exit__(self, *_: object) -> None:
        return None


def _keep_standard_streams() -> None:
    import llama_cpp._internals as internals
    import llama_cpp.llama as llama_module

    for module in (internals, llama_module):
        if hasattr(module, "suppress_stdout_stderr"):
            module.suppress_stdout_stderr = _Unsilenced  # type: ignore[attr-defined]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # OpenAI-style content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _state_cache(capacity: int) -> Any:
    """llama-cpp-python's RAM cache of prompt states, bounded by what each state really
    holds: it counts only the KV state (about 23 MB per 1,000 tokens of SmolLM2), not the
    copy of the logits kept beside it (n_batch x vocabulary floats: 100 MB at n_batch
    512, when 12 states took 1.7 GB and 512 MB of its own count would have let about 37
    in; 24 MB at ``BATCH_TOKENS``)."""
    from llama_cpp import LlamaRAMCache

    class StateCache(LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes
                       for state in self.cache_state.values())

    return StateCache(capacity_bytes=capacity)
