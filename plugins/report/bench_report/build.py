"""A stored run's report: reward per component, pass^k and pass@k with confidence intervals, flips, baseline, plugin
sections and cards; bench-report's report builder, which the kernel's `build_report` calls (docs/decisions.md, "Reports
and viewing")."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import (
    GOLD_FAILURES_EVENT,
    Card,
    ConfigError,
    Estimate,
    Registry,
    Report,
    ReportContext,
    RunRecord,
    RunView,
    Section,
    SectionTable,
    Store,
    TaskOutcomes,
    TerminationReason,
    flip_summary,
    is_success,
    mean_estimate,
    pass_hat_k_estimate,
    read_only,
    task_id_key,
    task_outcomes,
    trial_variance,
)

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value
KERNEL = "bench-kernel"
SHOWN_KERNEL = ("judge.agreement",)
"""The kernel's own metric values the report shows among the metrics: a judge panel's agreement in runs stored before
bench-judging owned it (docs/judges.md)."""


def build_report(store: Store, run_id: str, registry: Registry | None = None, by: Sequence[str] = ()) -> Report:
    """Compute the report of a stored run (with the registry's plugin sections, and figures by the `by` attributes)."""
    run = store.run(run_id)
    assert run is not None
    rows = store.conversations(run_id)
    agent_rows = [r for r in rows if r["arm"] == "agent" and r["termination_reason"] != INFRA]
    seed = run.config_hash
    outcomes = task_outcomes(agent_rows)
    k_max = max_k(outcomes)
    values = store.metric_values(run_id)
    agent_ids = {r["id"] for r in agent_rows}
    sections, cards = plugin_sections(RunView(store, run), registry) if registry is not None else ([], [])
    return Report(
        run_id=run_id,
        status=run.status,
        config=run.config,
        conversations=len(agent_rows),
        infrastructure_errors=sum(r["termination_reason"] == INFRA for r in rows),
        average_reward=_est(mean_estimate([r["reward"] for r in agent_rows], seed=seed)),
        pass_hat_k={str(k): _est(pass_hat_k_estimate(outcomes, k, seed=seed)) for k in range(1, k_max + 1)},
        pass_at_k={str(k): _est(pass_at_k_estimate(outcomes, k, seed=seed)) for k in range(1, k_max + 1)},
        components=_metric_means(
            [v for v in values if v["conversation_id"] in agent_ids and v["plugin"] == KERNEL and v["metric"].startswith("component.")],
            seed,
            "component.",
        ),
        # Plugin metrics are chosen by their plugin, never by name: a plugin's "reward" is its own metric.
        metrics=_metric_means(
            [
                {**v, "metric": f"{v['plugin']}:{v['metric']}"}
                for v in values
                if v["conversation_id"] in agent_ids and (v["plugin"] != KERNEL or v["metric"] in SHOWN_KERNEL)
            ],
            seed,
            "",
        ),
        terminations=dict(sorted(Counter(r["termination_reason"] for r in rows if r["arm"] == "agent").items())),
        flips=flip_summary(outcomes),
        baseline=_baseline([r for r in rows if r["arm"] == "baseline" and r["termination_reason"] != INFRA]),
        tasks=_task_rows(outcomes, agent_rows, rows),
        costs=[_cost_row(r) for r in [*store.llm_costs(run_id), *store.reported_usage(run_id)]],
        header={**_header(run, len({r["task_id"] for r in rows})), **_reported_models(store, run_id), **_in_flight(store, run_id)},
        counts=_counts(rows, outcomes),
        sections=sections,
        breakdowns=[breakdown(agent_rows, values, attribute) for attribute in _known_attributes(agent_rows, by)],
        gold_failures=list((store.last_run_event(run_id, (GOLD_FAILURES_EVENT,)) or {}).get("tasks", [])),
        cards=cards,
    )


def _attributes(row: dict[str, Any]) -> dict[str, str]:
    return json.loads(row["attributes_json"]) if row.get("attributes_json") else {}


def _known_attributes(rows: list[dict[str, Any]], wanted: Sequence[str]) -> list[str]:
    known = sorted({key for r in rows for key in _attributes(r)})
    unknown = [a for a in wanted if a not in known]
    if unknown:
        # Conversations stored before attributes were recorded (store migration m011) have none.
        listed = ", ".join(known) or "none: its conversations were stored before bench recorded task attributes"
        raise ConfigError(f"no task attribute {unknown[0]!r} in this run (attributes: {listed})")
    return list(dict.fromkeys(wanted))


def breakdown(rows: list[dict[str, Any]], values: list[dict[str, Any]], attribute: str) -> dict[str, Any]:
    """Average reward, pass^1, component and plugin metric means for each value of one task attribute."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[_attributes(r).get(attribute, "(none)")].append(r)
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in values:
        by_conversation[v["conversation_id"]].append(v)
    return {"attribute": attribute, "groups": [_group(value, members, by_conversation) for value, members in sorted(groups.items())]}


def _group(value: str, members: list[dict[str, Any]], by_conversation: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    outcomes = task_outcomes(members)
    figures: dict[str, float | None] = {
        "average_reward": _mean_or_none([r["reward"] for r in members]),
        "pass^1": _mean_or_none([o.c / o.n for o in outcomes]),
    }
    metric_values: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    for r in members:
        for v in by_conversation.get(r["id"], []):
            if v["plugin"] == KERNEL and v["metric"] == "reward":
                continue
            name = v["metric"] if v["plugin"] == KERNEL else f"{v['plugin']}:{v['metric']}"
            if v["value"] is not None:
                metric_values[name].append(v["value"])
            elif v.get("error"):  # a value without an error is "not applicable" (e.g. TCRR without tool calls)
                errors[name] += 1
    figures.update({name: _mean_or_none(metric_values[name]) for name in sorted(set(metric_values) | set(errors))})
    return {"value": value, "conversations": len(members), "tasks": len(outcomes), "figures": figures, "errors": dict(sorted(errors.items()))}


def _mean_or_none(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _header(run: RunRecord, tasks: int) -> dict[str, Any]:
    config = run.config
    models = {role: f"{m.get('backend')}/{m.get('model')}" for role, m in (config.get("models") or {}).items()}
    source = config.get("tasks_file") or config.get("data_dir") or "the plugin's packaged suite"
    return {
        "domain": ", ".join(run.task_sets) or config.get("domain"),
        "data": source,
        "split": config.get("split"),
        "agent": config.get("agent"),
        "user": config.get("user"),
        "judge": config.get("judge"),
        "models": models,
        "mode": config.get("mode"),
        "channel": config.get("channel", "identity"),
        "trials": config.get("trials"),
        "seed": config.get("seed"),
        "profile": _profile_label(config.get("profile")),
        "tasks": tasks,
        "plugins": _plugin_versions(run.plugins),
        **({"retrieval": _retrieval_label(config)} if config.get("retrieval") else {}),
        **({"duplex": _settings_label(config["duplex"])} if config.get("duplex") else {}),
        **({"agent_fingerprint": config["agent_fingerprint"]} if config.get("agent_fingerprint") else {}),
        **({"rescored_from": config["rescored_from"]} if config.get("rescored_from") else {}),
    }


def _settings_label(settings: dict[str, Any]) -> str:
    """A loop-played mode's settings (bench-duplex's in full duplex), plugin-owned: the set scalar ones, by name."""
    return ", ".join(f"{key} {value}" for key, value in settings.items() if value is not None and not isinstance(value, dict))


def _retrieval_label(config: dict[str, Any]) -> str:
    options = config.get("retrieval_options") or {}
    return str(config["retrieval"]) + (f" ({', '.join(f'{k}={v}' for k, v in sorted(options.items()))})" if options else "")


def _reported_models(store: Store, run_id: str) -> dict[str, Any]:
    models = store.reported_models(run_id)
    return {"agent_models": models} if models else {}


def _profile_label(profile: Any) -> str:
    """The run's profile as the header names it (runs stored before profiles existed had bench's own)."""
    if not isinstance(profile, dict):
        return "bench (recorded before profiles)"
    return f"{profile.get('name')} (sha256 {str(profile.get('sha256'))[:12]}{', ' + profile['path'] if profile.get('path') else ''})"


def _in_flight(store: Store, run_id: str) -> dict[str, Any]:
    """The in-flight limits of the run's latest start or resume (runs stored before they were kept have none)."""
    started = store.last_run_event(run_id, ("run.started", "run.resumed")) or {}
    if "in_flight" not in started:
        return {}
    return {"concurrency": started.get("concurrency"), "in_flight": started["in_flight"]}


def _plugin_versions(plugins: list[dict[str, Any]]) -> dict[str, str | None]:
    """Version of each plugin the run loaded; the built-ins as one entry, their distribution (bench-kernel)."""
    return {(p.get("distribution") or p["name"]) if p.get("builtin") else p["name"]: p.get("version") for p in plugins}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _counts(rows: list[dict[str, Any]], outcomes: list[TaskOutcomes]) -> str:
    agent = [r for r in rows if r["arm"] == "agent"]
    infra = sum(r["termination_reason"] == INFRA for r in agent)
    baseline = sum(r["arm"] == "baseline" and r["termination_reason"] != INFRA for r in rows)
    trials = sorted({o.n for o in outcomes})
    per_task = _plural(len(outcomes), "task")
    if len(trials) == 1:
        per_task += f" x {_plural(trials[0], 'trial')}"
    elif trials:
        per_task += f", {trials[0]} to {trials[-1]} trials each"
    return (
        f"{_plural(len(agent) - infra, 'agent conversation')} scored ({per_task}), "
        f"{_plural(infra, 'infrastructure error')} excluded, {_plural(baseline, 'baseline conversation')}"
    )


def plugin_sections(view: RunView, registry: Registry) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every registered report section and metric summary of the run's plugins, and their cards, each guarded, none able
    to write (a section whose cards fail is shown as a failed section)."""
    with read_only(view.store.db):
        cards, failed = plugin_cards(registry, lambda section, own: section.cards(own), view)
        return [*_plugin_sections(view, registry), *failed], cards


def plugin_cards(registry: Registry, build: Any, view: RunView | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`build(section, view)`'s cards of every registered report section, and a failed section for each that raised."""
    cards: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for name, section in registry.components.get("report section", {}).items():
        plugin = registry.origin("report section", name)
        try:
            built: list[Card] = build(section, attrs.evolve(view, plugin=plugin) if view is not None else None)
        except Exception as exc:  # noqa: BLE001 - one broken card never hides the report
            failed.append(_section_row(name, plugin, Section(title=section.title or name), f"cards: {type(exc).__name__}: {exc}"))
            continue
        cards += [{**attrs.asdict(card), "plugin": plugin} for card in built]
    return cards, failed


def _plugin_sections(view: RunView, registry: Registry) -> list[dict[str, Any]]:
    out = []
    for name, section in registry.components.get("report section", {}).items():
        own = attrs.evolve(view, plugin=registry.origin("report section", name))
        out.append(_guarded(name, own.plugin, section.title or name, lambda section=section, own=own: section.build(own)))
    for name, metric in registry.components.get("metric", {}).items():
        summarize = getattr(metric, "summarize", None)
        if summarize is not None:
            own = attrs.evolve(view, plugin=registry.origin("metric", name))
            out.append(
                _guarded(
                    name, own.plugin, f"{name} (run-level)", lambda summarize=summarize, name=name, own=own: _summary_section(name, summarize(own))
                )
            )
    return [s for s in out if s is not None]


def _summary_section(name: str, figures: Any) -> Section | None:
    if isinstance(figures, Section) or not figures:
        return figures or None
    return Section(title=f"{name} (run-level)", tables=[SectionTable(headers=["figure", "value"], rows=[[k, v] for k, v in figures.items()])])


def _guarded(name: str, plugin: str, title: str, build: Any) -> dict[str, Any] | None:
    try:
        section = build()
    except Exception as exc:  # noqa: BLE001 - one broken section never hides the report
        return _section_row(name, plugin, Section(title=title), f"{type(exc).__name__}: {exc}")
    return None if section is None else _section_row(name, plugin, section)


def _section_row(name: str, plugin: str, section: Section, error: str | None = None) -> dict[str, Any]:
    """A section as the report holds it (`Report.sections`); a failed one has its title and error only."""
    tables = [attrs.asdict(t) for t in section.tables]
    return {
        "name": name,
        "plugin": plugin,
        "title": section.title,
        "tables": tables,
        "text": section.text,
        "notes": list(section.notes),
        "error": error,
    }


def _cost_row(row: dict[str, Any]) -> dict[str, Any]:
    # A sum over calls with an unknown price is unknown, not the sum of the known ones.
    cost = None if row["unpriced"] else round(row["cost"] or 0.0, 6)
    return {**row, "cost": cost}


def _est(e: Estimate) -> dict[str, Any]:
    return {"value": _num(e.value), "low": _num(e.low), "high": _num(e.high), "n": e.n}


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _metric_means(values: list[dict[str, Any]], seed: str, prefix: str) -> dict[str, dict[str, Any]]:
    grouped: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    messages: dict[str, Counter[str]] = defaultdict(Counter)
    for v in values:
        name = v["metric"][len(prefix) :]
        if v["value"] is not None:
            grouped[name].append(v["value"])
        elif v.get("error"):
            errors[name] += 1
            messages[name][v["error"]] += 1
    names = sorted(set(grouped) | set(errors))
    # error_messages: each distinct message with the conversations it ended, the most frequent first
    return {
        n: {**_est(mean_estimate(grouped.get(n, []), seed=f"{seed}:{n}")), "errors": errors[n], "error_messages": dict(messages[n].most_common())}
        for n in names
    }


def _baseline(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not rows:
        return None
    passed = sorted((r["task_id"] for r in rows if is_success(r["reward"])), key=task_id_key)
    return {"agent": rows[0]["agent"], "conversations": len(rows), "pass_rate": round(len(passed) / len(rows), 6), "passed_tasks": passed}


def _task_rows(outcomes: list[TaskOutcomes], agent_rows: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rewards: dict[str, list[float]] = defaultdict(list)
    for r in agent_rows:
        rewards[r["task_id"]].append(r["reward"])
    baseline = {r["task_id"]: is_success(r["reward"]) for r in rows if r["arm"] == "baseline" and r["termination_reason"] != INFRA}
    return [
        {
            "task_id": o.task_id,
            "trials": o.n,
            "successes": o.c,
            "mean_reward": round(sum(rewards[o.task_id]) / o.n, 6),
            "flips": o.flips,
            "flip_rate": round(o.flip_rate, 6),
            "baseline_passes": baseline.get(o.task_id),
            "flip_probability": task_flip_probability(o),
        }
        for o in sorted(outcomes, key=lambda o: task_id_key(o.task_id))  # shown in reading order; the intervals keep theirs
    ]


# --------------------------------------------------------------------------- figures only the report shows


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased probability that at least one of k trials drawn from n (c successful) succeeds."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_estimate(outcomes: Sequence[TaskOutcomes], k: int, *, seed: str) -> Estimate:
    """Mean pass@k over tasks (tasks with fewer than k trials excluded), with a bootstrap CI over tasks."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return mean_estimate([pass_at_k(task.n, task.c, k) for task in outcomes if task.n >= k], seed=seed)


def max_k(outcomes: Sequence[TaskOutcomes]) -> int:
    """Largest k every task supports: the minimum trial count (0 if no tasks)."""
    return min((task.n for task in outcomes), default=0)


def task_flip_probability(task: TaskOutcomes) -> float | None:
    """Estimated chance that two trials of this task disagree, 2p(1-p); None with one trial (docs/noise.md)."""
    variance = trial_variance(task)
    return None if variance is None else round(2.0 * variance, 6)


# --------------------------------------------------------------------------- the json format


def render_json(report: Report, context: ReportContext) -> str:
    """The json format: the report's JSON, or one section's."""
    if context.section is not None:
        return json.dumps(report.section(context.section), indent=2, sort_keys=True) + "\n"
    own = attrs.asdict(report, filter=lambda field, _: field.name != "cards")
    return json.dumps({**{c["name"]: c["figures"] for c in report.cards}, **own}, indent=2, sort_keys=True)
