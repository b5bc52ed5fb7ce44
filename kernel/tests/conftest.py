"""Kernel test set-up: make the toy domain module importable under --import-mode=importlib, and the CLI's plugin fixture."""

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

sys.path.insert(0, str(Path(__file__).parent))

from plugin_factory import no_installed_plugins
from toy_domain import TASKS, ToyDomain, ToyPlugin

from bench_kernel import cli as cli_module
from bench_kernel.plugins import PluginSet, get_plugin_manager
from bench_kernel.report import report as report_module
from bench_kernel.run import checks


@pytest.fixture
def use_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Make the CLI see the toy domain (with the given tasks) and any extra plugin objects, and nothing installed
    but bench-report with `report=True` (the full report rather than the kernel's summary).

    The CLI has no switch for plugin objects that are not installed distributions (the toy domain is a
    test module, not an entry point), so the three places that build a plugin manager for the CLI (run,
    tasks/check, report) are patched to add them; everything downstream (collect, runner, store, report)
    runs unchanged. test_third_party.py covers the unpatched path with real installed plugins. Logs are
    captured (the CLI entry point, not run here, is what sends them to stderr), so stdout holds only
    command output.
    """
    monkeypatch.delenv("BENCH_DEBUG", raising=False)
    monkeypatch.delenv("BENCH_DB", raising=False)

    def use(tasks: Sequence[dict[str, Any]] = TASKS, extra: Sequence[tuple[str, object]] = (), report: bool = False) -> None:
        def factory(selected: Sequence[str] | None = None, extra_: Sequence[tuple[str, object]] = ()) -> PluginSet:
            chosen = no_installed_plugins() if selected is None else list(selected)
            if report:  # bench-report, installed: the full report (tests asking for it are marked `needs_report`)
                chosen = [*(name for name in chosen if name != "no:report"), "report"]
            return get_plugin_manager(chosen, extra=[("toy", ToyPlugin(ToyDomain(tasks=list(tasks)))), *extra, *extra_])

        monkeypatch.setattr(cli_module, "get_plugin_manager", factory)
        monkeypatch.setattr(checks, "get_plugin_manager", factory)
        monkeypatch.setattr(report_module, "get_plugin_manager", factory)
        monkeypatch.setattr(report_module, "always_loaded", list)  # nothing installed loads with every report either

    use()
    with capture_logs():
        yield use
