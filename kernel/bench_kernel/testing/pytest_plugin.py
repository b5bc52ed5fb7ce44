"""Fixtures for plugin authors (registered through the pytest11 entry point)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bench_kernel.plugins import PluginSet, collect, get_plugin_manager
from bench_kernel.registry import Registry
from bench_kernel.store.store import Store
from bench_kernel.testing.fake_openai import FakeOpenAIServer

if TYPE_CHECKING:
    from bench_kernel.testing.practice import PracticeRun


def pytest_configure(config: pytest.Config) -> None:
    """Tests keep task-set hashes in a directory of their own, never in the user's cache (unless $BENCH_CACHE_DIR says)."""
    os.environ.setdefault("BENCH_CACHE_DIR", tempfile.mkdtemp(prefix="bench-test-cache-"))


@pytest.fixture
def bench_plugins() -> Callable[..., PluginSet]:
    """A factory for fresh plugin managers: bench_plugins(["mock"], extra=[("mine", obj)])."""

    def make(selected: list[str] | None = None, extra: list[tuple[str, object]] | None = None) -> PluginSet:
        return get_plugin_manager(selected, extra or [])

    return make


@pytest.fixture
def bench_registry(bench_plugins: Callable[..., PluginSet]) -> Callable[..., Registry]:
    """A factory for registries of what the chosen plugins register."""

    def make(selected: list[str] | None = None, extra: list[tuple[str, object]] | None = None) -> Registry:
        return collect(bench_plugins(selected, extra))

    return make


@pytest.fixture
def bench_store(tmp_path: Path) -> Iterator[Store]:
    """A results store in a temporary file, closed after the test."""
    store = Store(tmp_path / "results.db")
    yield store
    store.close()


@pytest.fixture
def fake_openai_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """Start real OpenAI-protocol servers on 127.0.0.1 (FakeOpenAIServer's arguments); all stopped after the test."""
    started: list[FakeOpenAIServer] = []

    def start(*args: Any, **kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(*args, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def practice_run(tmp_path: Path) -> Callable[..., PracticeRun]:
    """Play a plugin on the kernel's practice domain: practice_run("mine", agent="mine") -> PracticeRun (RunConfig's fields)."""
    from bench_kernel.testing.practice import play_practice  # the runner only for tests that play

    def play(plugin: str, **config: Any) -> PracticeRun:
        return play_practice(plugin, tmp_path / "practice.db", **config)

    return play
