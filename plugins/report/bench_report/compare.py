"""Two runs of one suite side by side: per-task differences, flips, and paired bootstrap intervals."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import ConfigError, Estimate, Registry, Store, TerminationReason, bootstrap_ci, is_success, pass_hat_k, task_id_key

from .build import plugin_cards
from .text import cell

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value


@attrs.frozen(kw_only=True)
class TaskRecord:
    """One task's trials in one run: the reward and success of each, in trial order."""

    task_id: str
    rewards: tuple[float, ...]
    successes: tuple[bool, ...]

    @property
    def mean_reward(self) -> float:
        """Mean reward over the task's trials."""
        return math.fsum(self.rewards) / len(self.rewards)

    @property
    def passed(self) -> bool:
        """Whether every trial succeeded (the task's pass^n)."""
        return all(self.successes)


def task_records(rows: Sequence[dict[str, Any]]) -> dict[str, TaskRecord]:
    """Per task, the scored agent conversations of a run (infrastructure errors left out), in trial order."""
    trials: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if r["arm"] == "agent" and r["termination_reason"] != INFRA:
            trials[r["task_id"]].append((r["trial"], r["reward"] or 0.0))
    return {
        task: TaskRecord(task_id=task, rewards=tuple(v for _, v in sorted(pairs)), successes=tuple(is_success(v) for _, v in sorted(pairs)))
        for task, pairs in sorted(trials.items())
    }


def paired_difference(pairs: Sequence[tuple[float, float]], *, seed: str, resamples: int = 2000) -> Estimate:
    """Mean of b - a over paired units, with a percentile bootstrap CI resampling the pairs (not each side alone)."""
    differences = [b - a for a, b in pairs]
    return bootstrap_ci(differences, lambda d: math.fsum(d) / len(d), seed=seed, resamples=resamples)


def task_pass_hat_k(record: TaskRecord, k: int) -> float:
    """A task's pass^k from its own trials."""
    return pass_hat_k(len(record.successes), sum(record.successes), k)


def flip(a: TaskRecord, b: TaskRecord) -> str:
    """'gained' when B passes every trial and A did not, 'lost' for the reverse, '' otherwise."""
    if a.passed == b.passed:
        return ""
    return "gained" if b.passed else "lost"


@attrs.frozen(kw_only=True)
class Comparison:
    """Everything `bench compare` shows, as plain data (B minus A throughout)."""

    run_a: str
    run_b: str
    agents: dict[str, Any]
    common_tasks: int
    only_in_a: list[str]
    only_in_b: list[str]
    mean_reward: dict[str, Any]
    pass_hat_k: dict[str, dict[str, Any]]
    tasks: list[dict[str, Any]]
    flips: dict[str, list[str]]
    cards: list[dict[str, Any]] = attrs.field(factory=list)
    """The plugins' cards, from the comparison's own figures (bench-trust's noise: whether the pass^1 difference is within
    what the two runs can detect, docs/noise.md); JSON under each card's name."""


def compare(
    run_a: str,
    rows_a: Sequence[dict[str, Any]],
    run_b: str,
    rows_b: Sequence[dict[str, Any]],
    agents: dict[str, Any] | None = None,
    resamples: int = 2000,
) -> Comparison:
    """Compare two runs' stored conversation rows task by task; intervals are seeded by the two run ids."""
    a, b = task_records(rows_a), task_records(rows_b)
    common = sorted(set(a) & set(b))
    seed = f"compare:{run_a}:{run_b}"
    k_max = min((min(len(a[t].successes), len(b[t].successes)) for t in common), default=0)
    tasks = [_task_row(a[t], b[t]) for t in sorted(common, key=task_id_key)]  # reading order; the intervals keep theirs
    pass_k = {
        str(k): _figure([(task_pass_hat_k(a[t], k), task_pass_hat_k(b[t], k)) for t in common], f"{seed}:pass^{k}", resamples)
        for k in range(1, k_max + 1)
    }
    return Comparison(
        run_a=run_a,
        run_b=run_b,
        agents=agents or {},
        common_tasks=len(common),
        only_in_a=sorted(set(a) - set(b), key=task_id_key),
        only_in_b=sorted(set(b) - set(a), key=task_id_key),
        mean_reward=_figure([(a[t].mean_reward, b[t].mean_reward) for t in common], f"{seed}:mean_reward", resamples),
        pass_hat_k=pass_k,
        tasks=tasks,
        flips={kind: [row["task_id"] for row in tasks if row["flip"] == kind] for kind in ("gained", "lost")},
    )


def with_cards(comparison: Comparison, registry: Registry) -> Comparison:
    """The comparison with the cards of the registry's report sections (one that raises is a note line instead)."""
    own = attrs.asdict(comparison)
    cards, failed = plugin_cards(registry, lambda section, _: section.compare_cards(own))
    cards += [
        {
            "name": f["name"],
            "title": f["title"],
            "heading": "",
            "figures": None,
            "rows": [],
            "plugin": f["plugin"],
            "lines": [f"note: cards of section {f['name']} ({f['plugin']}) failed: {f['error']}"],
        }
        for f in failed
    ]
    return attrs.evolve(comparison, cards=cards)


def _figure(pairs: list[tuple[float, float]], seed: str, resamples: int) -> dict[str, Any]:
    difference = paired_difference(pairs, seed=seed, resamples=resamples)
    mean = lambda values: _num(math.fsum(values) / len(values)) if values else None  # noqa: E731
    return {
        "a": mean([p[0] for p in pairs]),
        "b": mean([p[1] for p in pairs]),
        "difference": _num(difference.value),
        "low": _num(difference.low),
        "high": _num(difference.high),
        "n": difference.n,
    }


def _task_row(a: TaskRecord, b: TaskRecord) -> dict[str, Any]:
    return {
        "task_id": a.task_id,
        "trials_a": len(a.rewards),
        "trials_b": len(b.rewards),
        "successes_a": sum(a.successes),
        "successes_b": sum(b.successes),
        "mean_reward_a": _num(a.mean_reward),
        "mean_reward_b": _num(b.mean_reward),
        "difference": _num(b.mean_reward - a.mean_reward),
        "flip": flip(a, b),
    }


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def compare_stored(store_a: Store, run_a: str, store_b: Store, run_b: str, registry: Registry | None = None) -> Comparison:
    """Compare two stored runs (from one results database or two), with the cards of the registry's sections."""
    records = []
    for store, run_id in ((store_a, run_a), (store_b, run_b)):
        run = store.run(run_id)
        assert run is not None
        records.append((run, store.conversations(run_id)))
    (ra, rows_a), (rb, rows_b) = records
    if not {r["task_id"] for r in rows_a} & {r["task_id"] for r in rows_b}:
        raise ConfigError(f"runs {run_a!r} and {run_b!r} share no task: compare two runs of the same suite")
    agents = {"a": ra.config.get("agent"), "b": rb.config.get("agent")}
    comparison = compare(run_a, rows_a, run_b, rows_b, agents)
    return with_cards(comparison, registry) if registry is not None else comparison


# --------------------------------------------------------------------------- rendering


def render_comparison(c: Comparison, fmt: str) -> str:
    """A comparison as json, markdown or a plain table."""
    if fmt == "json":
        own = attrs.asdict(c, filter=lambda field, _: field.name != "cards")
        return json.dumps({**{card["name"]: card["figures"] for card in c.cards}, **own}, indent=2, sort_keys=True) + "\n"
    markdown = fmt == "markdown"
    head = "## " if markdown else ""
    out = [
        f"{head}Run {c.run_b} (agent {c.agents.get('b')}) against run {c.run_a} (agent {c.agents.get('a')}): "
        f"{c.common_tasks} common tasks, differences are B - A with paired bootstrap 95% intervals over tasks",
        "",
    ]
    figures = [("mean_reward", c.mean_reward), *((f"pass^{k}", v) for k, v in c.pass_hat_k.items())]
    out += _table(
        ["figure", "A", "B", "B - A", "95% low", "95% high", "tasks"],
        [[name, f["a"], f["b"], f["difference"], f["low"], f["high"], f["n"]] for name, f in figures],
        markdown,
    )
    for card in c.cards:
        out += ["", *(f"{head}{line}" for line in card["lines"])]
    out += [
        "",
        f"{head}Flips: {len(c.flips['gained'])} gained ({', '.join(c.flips['gained']) or 'none'}), "
        f"{len(c.flips['lost'])} lost ({', '.join(c.flips['lost']) or 'none'})",
        "",
    ]
    out += _table(
        ["task", "successes A", "successes B", "reward A", "reward B", "B - A", "flip"],
        [
            [
                t["task_id"],
                f"{t['successes_a']}/{t['trials_a']}",
                f"{t['successes_b']}/{t['trials_b']}",
                t["mean_reward_a"],
                t["mean_reward_b"],
                t["difference"],
                t["flip"] or "-",
            ]
            for t in c.tasks
        ],
        markdown,
    )
    for side, missing in (("A", c.only_in_a), ("B", c.only_in_b)):
        if missing:
            out.append(f"note: {len(missing)} tasks only in run {side}, left out: {', '.join(missing)}")
    return "\n".join(out) + "\n"


def _table(headers: list[str], rows: list[list[Any]], markdown: bool) -> list[str]:
    cells = [[cell(v) for v in row] for row in rows]
    if markdown:
        return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers), *("| " + " | ".join(r) + " |" for r in cells)]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [headers, ["-" * w for w in widths], *cells]]
