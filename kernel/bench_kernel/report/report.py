"""A stored run's report, built and printed by registered plugins (bench-report's), or the kernel's short summary."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_kernel.errors import BenchError, ConfigError, did_you_mean
from bench_kernel.evaluation.sections import Report, ReportBuilder, ReportContext, ReportFormat
from bench_kernel.plugins import always_loaded, collect, get_plugin_manager, installed_entry_points
from bench_kernel.registry import Registry
from bench_kernel.schema.messages import TerminationReason
from bench_kernel.store.store import RunRecord, Store

REPORT_PLUGIN = "bench-report"
SUMMARY_FORMATS = ("table", "json")
"""The formats the kernel alone answers with its summary (the default and json), rather than refuse them."""
PLUGIN_FORMATS = ("markdown", "csv", "html")
"""bench-report's other formats: asking for one without it names the distribution."""
INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value
SUMMARY_NOTE = "this is the kernel's summary: the full report (every figure, each format) comes from bench-report (pip install bench-report)"


def build_report(store: Store, run_id: str, registry: Registry | None = None, by: Sequence[str] = ()) -> Report:
    """A stored run's report, built by the registry's report builder, else the installed one loaded with every run."""
    builder = report_builder(registry) or report_builder(collect(get_plugin_manager(always_loaded())))
    if builder is None:
        raise ConfigError(f"a run's report is built by {REPORT_PLUGIN}, which is not installed (pip install {REPORT_PLUGIN}) or failed to load")
    return builder.build(store, run_id, registry, by)


def report_builder(registry: Registry | None) -> ReportBuilder | None:
    """The registry's report builder (the first by name), or None."""
    builders = registry.components.get("report builder", {}) if registry else {}
    return next(iter(builders.values()), None)


def run_registry(run: RunRecord) -> tuple[Registry | None, list[str]]:
    """The registry of the plugins the run loaded that are still installed, and a note on each one left out."""
    used = [p["name"] for p in run.plugins if not p.get("builtin")]
    installed = installed_entry_points()
    try:
        plugins = get_plugin_manager(list(dict.fromkeys([*(name for name in used if name in installed), *always_loaded()])))
        registry = collect(plugins)
    except BenchError as exc:
        return None, [f"plugin sections unavailable ({exc})"]
    failed = {p.name: p.error for p in plugins.failures()}
    loaded = {p.name for p in plugins.plugins}
    notes = [f"plugin {name!r} of this run failed to load ({failed[name]}): its sections are left out" for name in used if name in failed]
    notes += [f"plugin {name!r} of this run is not installed: its sections are left out" for name in used if name not in loaded]
    return registry, notes


def report_format(registry: Registry | None, name: str) -> ReportFormat | None:
    """The registered format of that name; None for the kernel's summary (`table` or `json` with no report builder)."""
    formats = registry.components.get("report format", {}) if registry else {}
    if name in formats:
        return formats[name]
    if name in SUMMARY_FORMATS and report_builder(registry) is None:
        return None
    if name in (*SUMMARY_FORMATS, *PLUGIN_FORMATS):
        raise ConfigError(
            f"--format {name} comes from the plugin {REPORT_PLUGIN}, which is not installed (pip install {REPORT_PLUGIN}) "
            "or failed to load (`bench plugins` says why)"
        )
    known = list(dict.fromkeys([*formats, *SUMMARY_FORMATS]))
    raise ConfigError(f"no report format {name!r}{did_you_mean(name, known)} (formats: {', '.join(known)})")


def summary(store: Store, run_id: str) -> dict[str, Any]:
    """What the kernel alone reports of a stored run: its id, status, counts and mean agent reward."""
    # Each key the full report has too holds the same value there; `mean_reward` is its `average_reward` without the interval.
    run = store.run(run_id)
    assert run is not None
    rows = store.conversations(run_id)
    scored = [r["reward"] for r in rows if r["arm"] == "agent" and r["termination_reason"] != INFRA]
    return {
        "run_id": run_id,
        "status": run.status,
        "conversations": len(scored),
        "infrastructure_errors": sum(r["termination_reason"] == INFRA for r in rows),
        "mean_reward": round(math.fsum(scored) / len(scored), 6) if scored else None,
    }


def write_charts(registry: Registry | None, report: Report, context: ReportContext, directory: Path) -> int:
    """Write the charts of every registered format as DIRECTORY/NAME.png (`--plots`) and return how many."""
    formats = registry.components.get("report format", {}) if registry else {}
    charts = {name: png for f in formats.values() for name, png in f.charts(report, context).items()}
    if not charts:
        raise ConfigError(f"no report format of this run's plugins draws charts: {REPORT_PLUGIN} does (pip install '{REPORT_PLUGIN}[plots]')")
    directory.mkdir(parents=True, exist_ok=True)
    for name, png in charts.items():
        (directory / f"{name}.png").write_bytes(png)
    return len(charts)
