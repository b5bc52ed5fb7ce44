"""A hand-built report holding every part, which bench-report's format tests pin their output on."""

from __future__ import annotations

from typing import Any

from bench_kernel import Report

FRAGILE = "RuntimeError: judge model returned nothing"


def figure(value: float | None, n: int, **more: Any) -> dict[str, Any]:
    return {"value": value, "low": value, "high": value, "n": n, **more}


def full_report() -> Report:
    """A report with every part: errors, a gold failure, a card, a cost, a breakdown, and a good, a failed and a text section."""
    group = {"conversations": 2, "tasks": 1}
    return Report(
        run_id="r",
        status="complete",
        config={},
        conversations=4,
        infrastructure_errors=0,
        average_reward=figure(0.5, 4),
        pass_hat_k={"1": figure(0.5, 2)},
        pass_at_k={"1": figure(1.0, 2)},
        components={"DB": figure(0.5, 4, errors=0, error_messages={})},
        metrics={"demo:fragile": figure(1.0, 2, errors=2, error_messages={FRAGILE: 2})},
        terminations={"user_stop": 4},
        flips={"tasks": 2, "mixed_tasks": 1, "mixed_share": 0.5, "mean_flip_rate": 0.5},
        baseline={"agent": "do-nothing", "conversations": 2, "pass_rate": 0.0, "passed_tasks": []},
        tasks=[
            {"task_id": "a", "trials": 2, "successes": 2, "mean_reward": 1.0, "flips": 0, "flip_rate": 0.0, "baseline_passes": False},
            {"task_id": "b", "trials": 2, "successes": 0, "mean_reward": 0.0, "flips": 0, "flip_rate": 0.0, "baseline_passes": False},
        ],
        costs=[
            {
                "arm": "agent",
                "role": "agent (reported)",
                "model": "acme-1",
                "calls": 3,
                "cached": 0,
                "errors": 0,
                "prompt_tokens": 150,
                "completion_tokens": 15,
                "cost": None,
            }
        ],
        header={"domain": "toy", "data": "tasks.json", "agent": "oracle", "user": "scripted", "mode": "default", "tasks": 2, "trials": 2},
        counts="4 agent conversations scored (2 tasks x 2 trials), 0 infrastructure errors excluded, 2 baseline conversations",
        sections=[
            {
                "name": "turns",
                "plugin": "demo",
                "title": "Turns",
                "tables": [{"headers": ["task", "turns"], "rows": [["a", 3], ["b", 0.5]], "title": ""}],
                "text": "Two paragraphs.\n\nOf text.",
                "notes": ["a note"],
                "error": None,
            },
            {"name": "broken", "plugin": "cracked", "title": "broken", "tables": [], "text": "", "notes": [], "error": "KeyError: 'no column'"},
            {"name": "prose", "plugin": "demo", "title": "Prose", "tables": [], "text": "Only words.", "notes": [], "error": None},
        ],
        breakdowns=[
            {
                "attribute": "persona",
                "groups": [
                    {"value": "EASY_1", **group, "figures": {"average_reward": 1.0, "pass^1": 1.0, "demo:fragile": 1.0}, "errors": {}},
                    {
                        "value": "HARD_1",
                        **group,
                        "figures": {"average_reward": 0.0, "pass^1": 0.0, "demo:fragile": None},
                        "errors": {"demo:fragile": 2},
                    },
                ],
            }
        ],
        gold_failures=[{"task_id": "b", "problems": ["env assertion fails"], "scored_as_reference": False}],
        cards=[
            {
                "name": "count",
                "plugin": "demo",
                "title": "Count",
                "heading": "Count of conversations",
                "figures": {"n": 4},
                "lines": ["4 scored"],
                "rows": [{"metric": "count.n", "value": 4, "low": None, "high": None, "n": 4, "errors": 0, "n_of": "conversations"}],
            }
        ],
    )
