"""The plugin as bench sees it: installed, registered through its entry point, cheap to import."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from bench_openai import OpenAIModel
from bench_openai.client import OpenAIClient

from bench_kernel import ModelConfig, collect, get_plugin_manager, installed_entry_points


def test_entry_point_is_installed() -> None:
    assert installed_entry_points()["openai"].value == "bench_openai"


def test_registers_the_openai_backend_through_a_fresh_plugin_manager() -> None:
    plugins = get_plugin_manager(["openai"])
    registry = collect(plugins)
    assert plugins.failures() == []
    model = registry.get("model", "openai")
    assert isinstance(model, OpenAIModel) and registry.origin("model", "openai") == "openai"
    client = model.client(ModelConfig(model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1"))
    assert isinstance(client, OpenAIClient)
    asyncio.run(client.aclose())


def test_importing_the_plugin_does_not_import_httpx() -> None:
    code = "import sys, bench_openai; sys.exit('httpx' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
