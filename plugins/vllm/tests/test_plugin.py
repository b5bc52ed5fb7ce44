"""The plugin as bench sees it: installed, registered through its entry point, cheap to import."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from bench_openai.client import OpenAIClient
from bench_vllm import VLLMModel
from bench_vllm.client import VLLMClient

from bench_kernel import ModelConfig, collect, get_plugin_manager, installed_entry_points


def test_entry_point_is_installed() -> None:
    assert installed_entry_points()["vllm"].value == "bench_vllm"


def test_registers_the_vllm_backend_beside_openai() -> None:
    plugins = get_plugin_manager(["vllm", "openai"])
    registry = collect(plugins)
    assert plugins.failures() == []
    assert {"openai", "vllm"} <= set(registry.names("model"))
    model = registry.get("model", "vllm")
    assert isinstance(model, VLLMModel) and registry.origin("model", "vllm") == "vllm"
    client = model.client(ModelConfig(backend="vllm", model="Qwen/Qwen3-8B", base_url="http://127.0.0.1:9/v1"))
    assert isinstance(client, VLLMClient) and isinstance(client, OpenAIClient)
    asyncio.run(client.aclose())


def test_works_without_the_openai_plugin_loaded() -> None:
    registry = collect(get_plugin_manager(["vllm"]))
    assert registry.names("model") == ["vllm"]


def test_importing_the_plugin_and_its_parsing_does_not_import_httpx() -> None:
    code = "import sys, bench_vllm, bench_vllm.parsing, bench_vllm.prompting; sys.exit('httpx' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
