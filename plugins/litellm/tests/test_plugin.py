"""The plugin as bench sees it, with or without litellm: installed, registered, cheap to import, refused cleanly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bench_litellm import INSTALL, LiteLLMModel
from click.testing import CliRunner

from bench_kernel import ConfigError, ModelConfig, collect, get_plugin_manager, installed_entry_points
from bench_kernel.testing import cli


def test_entry_point_is_installed() -> None:
    assert installed_entry_points()["litellm"].value == "bench_litellm"


def test_registers_the_litellm_backend_through_a_fresh_plugin_manager() -> None:
    plugins = get_plugin_manager(["litellm"])
    registry = collect(plugins)
    assert plugins.failures() == []
    assert isinstance(registry.get("model", "litellm"), LiteLLMModel) and registry.origin("model", "litellm") == "litellm"


def test_bench_plugins_lists_it() -> None:
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0, result.output
    assert any(line.split()[:2] == ["litellm", "bench-litellm"] for line in result.output.splitlines())


def test_importing_and_registering_imports_neither_litellm_nor_an_http_stack() -> None:
    code = (
        "import sys, bench_litellm; from bench_kernel import collect, get_plugin_manager; "
        "collect(get_plugin_manager(['litellm'])); "
        "sys.exit(sorted({'litellm', 'httpx', 'aiohttp', 'openai'} & set(sys.modules)) or None)"
    )
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def without_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `import litellm` fail as it does where the extra is not installed."""
    monkeypatch.setitem(sys.modules, "litellm", None)


def test_a_client_without_litellm_is_a_config_error_naming_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    without_litellm(monkeypatch)
    with pytest.raises(ConfigError, match=r"needs litellm, which is not installed: pip install 'bench-litellm\[litellm\]'"):
        LiteLLMModel(name="litellm").client(ModelConfig(backend="litellm", model="openai/fake"))


@pytest.mark.parametrize(
    "role_options",
    [
        ["--agent", "llm-fc", "--agent-backend", "litellm", "--agent-model", "openai/fake"],
        ["--agent", "oracle", "--user", "llm-user", "--user-backend", "litellm", "--user-model", "anthropic/claude-sonnet-4"],
        ["--agent", "llm-fc", "--model-option", "agent.backend=litellm", "--agent-model", "gemini/gemini-2.5-flash"],
    ],
    ids=["agent", "user", "model-option"],
)
def test_a_run_on_the_backend_without_litellm_is_refused_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, role_options: list[str]
) -> None:
    without_litellm(monkeypatch)
    db = tmp_path / "r.db"
    args = [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "litellm",
        "--plugin",
        "llm",
        "--task-id",
        "upgrade_by_email",
        "--no-baseline",
        "--db",
        str(db),
        *role_options,
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [f"Error: the litellm backend needs litellm, which is not installed: {INSTALL}"]
    assert not db.exists()  # refused before any run was begun
