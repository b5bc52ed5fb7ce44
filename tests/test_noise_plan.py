"""`bench plan` prices a comparison from a real ledger: llm-fc and llm-user on the mock domain against a fake server."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bench_kernel.testing import FakeOpenAIServer, bench_cli

Z = NormalDist()

pytest.importorskip("bench_mock", reason="the mock domain (bench-mock) is not installed")
pytest.importorskip("bench_llm", reason="bench-llm is not installed")
pytest.importorskip("bench_openai", reason="bench-openai is not installed")
pytest.importorskip("bench_trust", reason="`bench plan` comes from bench-trust, which is not installed")


def invoke(args: list[str]) -> Result:
    result = CliRunner().invoke(bench_cli(["trust"]), args)
    assert result.exit_code == 0, result.output
    return result


def alternating_world() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The mock domain's scripted upgrade, where the agent gives up in every other conversation (odd ones fail)."""
    from bench_mock.scripted_models import upgrade_world

    started = [0]

    def world(body: dict[str, Any]) -> dict[str, Any]:
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        if "change_plan" in tools and not any(m["role"] == "tool" for m in body["messages"]):
            started[0] += 1
            if started[0] % 2:
                return {"role": "assistant", "content": "I cannot change plans, sorry."}
        return upgrade_world(body)

    return world


def test_plan_prices_from_the_ledger(tmp_path: Path) -> None:
    db = str(tmp_path / "priced.db")
    roles = [
        f"--model-option={role}.{key}={value}"
        for role in ("agent", "user")
        for key, value in (("backend", "openai"), ("model", "fake-model"), ("base_url", "{url}"))
    ]
    with FakeOpenAIServer(alternating_world()) as server:
        invoke(
            [
                "run",
                "--plugin",
                "mock",
                "--plugin",
                "openai",
                "--plugin",
                "llm",
                "--agent",
                "llm-fc",
                "--user",
                "llm-user",
                "--task-id",
                "upgrade_by_email",
                "--trials",
                "4",
                "--no-baseline",
                "--concurrency",
                "1",
                "--db",
                db,
                "--run-id",
                "priced",
                "--price",
                "fake-model=1000,2000",
                "--format",
                "none",
                *(r.replace("{url}", server.base_url) for r in roles),
            ]
        )
    with sqlite3.connect(db) as conn:
        [(calls, prompt, completion, usd)] = conn.execute(
            "select count(*), sum(prompt_tokens), sum(completion_tokens), sum(cost) from llm_calls where run_id = 'priced'"
        ).fetchall()
        rewards = [r for (r,) in conn.execute("select reward from conversations where run_id = 'priced'")]
    assert sorted(rewards) == [0.0, 0.0, 1.0, 1.0] and usd > 0
    plan = json.loads(invoke(["plan", "--baseline", "priced", "--db", db, "--delta", "0.5", "--format", "json"]).stdout)
    # One task, 2 of 4: variance 1/3; 2 * (1/3) * 2.8016^2 / 0.25 = 20.9: 21 trials, past --max-trials 16, so
    # 2 tasks of 16 trials (2 * (1/3) * 7.849 / (16 * 0.25) = 1.31).
    assert plan["trial_variance"] == pytest.approx(1 / 3, abs=1e-6) and plan["trials_needed"] == 21
    assert plan["more_tasks_needed"] is True and (plan["design"]["tasks"], plan["design"]["trials"]) == (2, 16)
    assert plan["design"]["mdd"] == pytest.approx((Z.inv_cdf(0.975) + Z.inv_cdf(0.8)) * math.sqrt(2 / 3 / 32), abs=1e-6)
    cost = plan["cost"]
    assert cost["priced"] is True and cost["measured_conversations"] == 4
    per = cost["per_conversation"]
    assert per == pytest.approx(
        {"model_calls": calls / 4, "prompt_tokens": prompt / 4, "completion_tokens": completion / 4, "usd": usd / 4}, abs=1e-6
    )
    assert cost["per_run"]["usd"] == pytest.approx(usd / 4 * 32, abs=1e-5)
    assert cost["both_runs"]["model_calls"] == pytest.approx(calls / 4 * 64, abs=1e-5)
    wide = json.loads(invoke(["plan", "--baseline", "priced", "--db", db, "--delta", "0.5", "--max-trials", "32", "--format", "json"]).stdout)
    assert (wide["design"]["tasks"], wide["design"]["trials"], wide["more_tasks_needed"]) == (1, 21, False)
    text = invoke(["plan", "--baseline", "priced", "--db", db, "--delta", "0.5"]).stdout
    assert f"${usd / 4:.4f}" in text and "more than --max-trials 16" in text
