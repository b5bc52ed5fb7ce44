"""A run's figures as PNG charts (matplotlib, headless): `bench report RUN --plots DIR`.

matplotlib is bench-report's optional `plots` extra, imported only here and only when a chart is drawn.
Every chart is always written: a chart whose data the run lacks (no persona attribute, no GSRT values)
says so on its canvas instead of being skipped, so a directory of plots always has the same files.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import attrs

from bench_kernel import (
    ConfigError,
    Report,
    RunView,
    Store,
    TerminationReason,
    get_logger,
    is_success,
    read_only,
    run_registry,
)

from .build import breakdown, build_report

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value
INSTALL = "pip install 'bench-report[plots]'"
log = get_logger()
PLOTS = ("pass_hat_k", "components", "by_persona", "by_domain", "gsrt", "turns_to_completion", "cost_vs_reward")
TITLES = {
    "pass_hat_k": "pass^k against k (95% bands)",
    "components": "Reward components (mean, 95% CI)",
    "by_persona": "By persona",
    "by_domain": "By domain",
    "gsrt": "Goal-shift recovery turns (GSRT)",
    "turns_to_completion": "Turns to completion",
    "cost_vs_reward": "Cost against reward per model",
}


def pyplot() -> Any:
    """matplotlib's pyplot on the headless Agg backend, or a clear error naming the extra to install."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ConfigError(f"plots need matplotlib: {INSTALL}") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_data(store: Store, run_ids: list[str]) -> dict[str, Any]:
    """Everything the charts draw, as plain data: the first run's figures and every run's pass^k and costs."""
    reports = [build_report(store, run_id) for run_id in run_ids]
    first = run_ids[0]
    rows = [r for r in store.conversations(first) if r["arm"] == "agent" and r["termination_reason"] != INFRA]
    values = [v for v in store.metric_values(first) if v["conversation_id"] in {r["id"] for r in rows}]
    return {
        "pass_hat_k": {r.run_id: r.pass_hat_k for r in reports},
        "components": reports[0].components,
        "by_persona": _bars(rows, values, "persona"),
        "by_domain": _bars(rows, values, "domain"),
        "gsrt": _gsrt(values),
        "turns_to_completion": _turns(store, rows),
        "cost_vs_reward": {_model_label(r): _costs(store, r.run_id) for r in reports},
    }


def _bars(rows: list[dict[str, Any]], values: list[dict[str, Any]], attribute: str) -> dict[str, float | None]:
    if not any(attribute in json.loads(r.get("attributes_json") or "{}") for r in rows):
        return {}
    return {g["value"]: g["figures"]["average_reward"] for g in breakdown(rows, values, attribute)["groups"]}


def _gsrt(values: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for v in values:
        if v["plugin"] == "gsrt" and v["metric"].endswith("_turns") and v["value"] is not None:
            out[v["metric"].removeprefix("gsrt.").removesuffix("_turns")].append(v["value"])
    return dict(out)


def _turns(store: Store, rows: list[dict[str, Any]]) -> dict[str, list[int]]:
    """User turns per conversation, split by success."""
    counts = {
        r["conversation_id"]: r["turns"]
        for r in store.db.query(
            "select conversation_id, count(*) as turns from messages where role = 'user' and conversation_id in "
            "(select id from conversations where run_id = ?) group by conversation_id",
            [rows[0]["run_id"]] if rows else [""],
        )
    }
    out: dict[str, list[int]] = {"succeeded": [], "failed": []}
    for r in rows:
        out["succeeded" if is_success(r["reward"]) else "failed"].append(counts.get(r["id"], 0))
    return out


def _costs(store: Store, run_id: str) -> list[tuple[float, float]]:
    # A conversation whose cost is unknown (an unpriced model, an agent calling its models itself) is left out, not 0.
    return [
        (r["agent_cost"] + r["user_cost"], r["reward"] or 0.0)
        for r in store.conversations(run_id)
        if r["arm"] == "agent" and r["termination_reason"] != INFRA and r["agent_cost"] is not None and r["user_cost"] is not None
    ]


def _model_label(report: Report) -> str:
    agent = (report.config.get("models") or {}).get("agent") or {}
    model = f" ({agent.get('model')})" if agent.get("model") else ""
    return f"{report.run_id}: {report.config.get('agent')}{model}"


# --------------------------------------------------------------------------- drawing


def draw(name: str, data: Any) -> bytes:
    """One chart as PNG bytes."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    try:
        ax.set_title(TITLES[name])
        if data:
            DRAWERS[name](ax, data)
        else:
            ax.text(0.5, 0.5, f"no {TITLES[name].lower()} in this run", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png")
        return out.getvalue()
    finally:
        plt.close(fig)


def _pass_hat_k(ax: Any, runs: dict[str, dict[str, dict[str, Any]]]) -> None:
    for run_id, figures in runs.items():
        ks = [int(k) for k in figures if figures[k]["value"] is not None]
        if not ks:
            continue
        value, low, high = ([figures[str(k)][key] for k in ks] for key in ("value", "low", "high"))
        ax.plot(ks, value, marker="o", label=run_id)
        ax.fill_between(ks, low, high, alpha=0.2)
        ax.set_xticks(ks)
    ax.set(xlabel="k", ylabel="pass^k", ylim=(-0.02, 1.02))
    ax.legend(fontsize="small")


def _components(ax: Any, components: dict[str, dict[str, Any]]) -> None:
    names = list(components)
    value = [components[n]["value"] or 0.0 for n in names]
    errors = [
        [v - (components[n]["low"] or v) for n, v in zip(names, value, strict=True)],
        [(components[n]["high"] or v) - v for n, v in zip(names, value, strict=True)],
    ]
    ax.bar(names, value, yerr=errors, capsize=4)
    ax.set(ylabel="mean", ylim=(0, 1.05))


def _named_bars(ax: Any, groups: dict[str, float | None]) -> None:
    ax.bar(list(groups), [v or 0.0 for v in groups.values()])
    ax.set(ylabel="average reward", ylim=(0, 1.05))
    ax.tick_params(axis="x", labelrotation=30)


def _histograms(ax: Any, series: dict[str, list[float]]) -> None:
    present = {k: v for k, v in series.items() if v}
    top = max((max(v) for v in present.values()), default=1)
    bins = [x - 0.5 for x in range(int(top) + 2)]
    ax.hist(list(present.values()), bins=bins, label=list(present))
    ax.set(xlabel="turns", ylabel="count")
    ax.legend(fontsize="small")


def _cost_vs_reward(ax: Any, models: dict[str, list[tuple[float, float]]]) -> None:
    for label, points in models.items():
        ax.scatter([p[0] for p in points], [p[1] for p in points], label=label, alpha=0.6)
    ax.set(xlabel="cost per conversation (USD)", ylabel="reward", ylim=(-0.05, 1.05))
    ax.legend(fontsize="small")


DRAWERS: dict[str, Callable[[Any, Any], None]] = {
    "pass_hat_k": _pass_hat_k,
    "components": _components,
    "by_persona": _named_bars,
    "by_domain": _named_bars,
    "gsrt": _histograms,
    "turns_to_completion": _histograms,
    "cost_vs_reward": _cost_vs_reward,
}


def render_plots(store: Store, run_ids: list[str]) -> dict[str, bytes]:
    """Every chart of the runs (the first is the main one; all share the pass^k and cost charts) as PNG bytes, the
    run's plugin sections' charts after the report's own."""
    data = plot_data(store, run_ids)
    return {**{name: draw(name, data[name]) for name in PLOTS}, **section_plots(store, run_ids[0])}


def section_plots(store: Store, run_id: str) -> dict[str, bytes]:
    """The charts the run's plugin sections draw, named SECTION.CHART; a section whose charts fail is left out."""
    run = store.run(run_id)
    registry = run_registry(run)[0] if run is not None else None
    if registry is None or run is None:
        return {}
    out: dict[str, bytes] = {}
    for name, section in registry.components.get("report section", {}).items():
        own = attrs.evolve(RunView(store, run), plugin=registry.origin("report section", name))
        try:
            with read_only(store.db):
                out.update({f"{name}.{chart}": png for chart, png in section.plots(own).items()})
        except Exception as exc:  # noqa: BLE001 - one broken chart never hides the report
            log.warning("report.section_plots_failed", section=name, error=f"{type(exc).__name__}: {exc}")
    return out
