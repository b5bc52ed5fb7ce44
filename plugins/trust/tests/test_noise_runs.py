"""The noise card, `bench plan` and compare's "within noise" on runs made by real offline `bench run`s of the mock domain."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import sqlite3
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from bench_trust.stats import trials_needed
from click.testing import CliRunner, Result

from bench_kernel import Agent, AgentSession, ConversationSetup, DoNothingAgent, OracleAgent, RunConfig, get_plugin_manager, hookimpl, run
from bench_kernel.testing import bench_cli

pytest.importorskip("bench_mock", reason="every test here plays the mock domain (bench-mock)")

TRIALS = 4


def unit(text: str) -> float:
    """A number in [0, 1) from sha256 of a text: stable across processes, no global RNG."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


@attrs.define(kw_only=True)
class CoinOracle(Agent):
    """Replays the gold actions in some conversations and does nothing in the others: a noisy agent without a model.

    Each task gets a pass probability from its id; each conversation (its seed, derived from run seed, task and
    trial) draws against it, so a run is reproducible and its trials of one task differ.
    """

    name: str = "coin-oracle"
    description: str = "Gold actions or nothing, by a seeded coin per conversation."
    calls_models_itself: bool = False

    def start(self, setup: ConversationSetup) -> AgentSession:
        """The oracle's session or the do-nothing one."""
        chance = unit(f"task:{setup.task.id}")
        return (OracleAgent() if unit(f"conversation:{setup.seed}") < chance else DoNothingAgent()).start(setup)


class CoinPlugin:
    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        register(CoinOracle())


def invoke(args: list[str]) -> Result:
    result = CliRunner().invoke(bench_cli(["trust", "report"]), args)  # bench-report: bench compare, markdown, csv, html
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def coin_runs(tmp_path: Path) -> str:
    """Two noisy runs of the mock domain (seeds 1 and 2, TRIALS trials) and an oracle run, in one database."""
    db = str(tmp_path / "noise.db")
    for agent, seed, run_id in (("coin-oracle", 1, "coin-1"), ("coin-oracle", 2, "coin-2"), ("oracle", 300, "gold")):
        config = RunConfig(plugins=["mock"], domain="mock", agent=agent, seed=seed, run_id=run_id, trials=TRIALS, baseline=False)
        run(config, db, plugins=get_plugin_manager(["mock", "trust"], [("coin", CoinPlugin())]))
    return db


def outcomes(db: str, run_id: str) -> dict[str, list[bool]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select task_id, trial, reward from conversations where run_id = ? and arm = 'agent' order by task_id, trial", [run_id]
        ).fetchall()
    table: dict[str, list[bool]] = {}
    for task, _, reward in rows:
        table.setdefault(task, []).append(reward >= 1.0)
    return table


def by_hand(table: dict[str, list[bool]]) -> tuple[float, float]:
    """Mean per-trial variance and MDD of two runs of this size, written out from docs/noise.md."""
    variances = [sum(t) * (len(t) - sum(t)) / (len(t) * (len(t) - 1)) for t in table.values()]
    tasks = len(table)
    return sum(variances) / tasks, 2.801585 * math.sqrt(2 * sum(v / TRIALS for v in variances)) / tasks


def test_the_card_in_every_format(coin_runs: str) -> None:
    table = outcomes(coin_runs, "coin-1")
    mean_variance, mdd = by_hand(table)
    assert len(table) == 12 and 0 < sum(0 < sum(t) < TRIALS for t in table.values()) < 12  # some tasks flip, not all
    report = json.loads(invoke(["report", "coin-1", "--db", coin_runs, "--format", "json"]).stdout)
    card = report["noise"]
    assert card["method"] == "within-task" and (card["tasks"], card["trials_min"]) == (12, TRIALS)
    assert card["trial_variance"] == pytest.approx(mean_variance, abs=1e-6) and card["mdd"] == pytest.approx(mdd, abs=1e-5)
    assert card["flipped_tasks"] == sum(0 < sum(t) < TRIALS for t in table.values())
    rows = {t["task_id"]: t for t in report["tasks"]}
    for task, trials in table.items():
        c = sum(trials)
        assert rows[task]["flip_probability"] == pytest.approx(2 * c * (TRIALS - c) / (TRIALS * (TRIALS - 1)), abs=1e-6)
    text = invoke(["report", "coin-1", "--db", coin_runs]).stdout
    assert "\nNoise\n" in text and f"on the same tasks: {card['mdd']:.3f}" in text and "P(flip)" in text
    markdown = invoke(["report", "coin-1", "--db", coin_runs, "--format", "markdown"]).stdout
    assert "## Noise\n- minimum detectable difference (MDD)" in markdown
    summary = {r["metric"]: r for r in csv.DictReader(io.StringIO(invoke(["report", "coin-1", "--db", coin_runs, "--format", "csv"]).stdout))}
    assert float(summary["noise.mdd"]["value"]) == pytest.approx(mdd, abs=1e-5)
    assert summary["noise.mdd"]["n"] == "12" and "within-task" in summary["noise.mdd"]["n_of"]
    html = invoke(["report", "coin-1", "--db", coin_runs, "--format", "html"]).stdout
    assert '<section id="noise">' in html and f"{card['mdd']:.3f}" in html


def test_plan_on_a_noisy_run(coin_runs: str) -> None:
    plan = json.loads(invoke(["plan", "--baseline", "coin-1", "--db", coin_runs, "--delta", "0.1", "--format", "json"]).stdout)
    mean_variance, mdd = by_hand(outcomes(coin_runs, "coin-1"))
    needed = trials_needed(mean_variance, 12, 0.1)
    assert needed == math.ceil(2 * mean_variance * 2.801585**2 / (12 * 0.01) - 1e-9)
    assert (plan["tasks"], plan["trials"], plan["trials_needed"]) == (12, TRIALS, needed)
    assert plan["baseline_mdd"] == pytest.approx(mdd, abs=1e-5) and plan["method"] == "within-task"
    design = plan["design"]
    if needed <= plan["max_trials"]:
        assert (design["tasks"], design["trials"], plan["more_tasks_needed"]) == (12, needed, False)
    assert design["conversations_per_run"] == design["tasks"] * design["trials"] and design["mdd"] <= 0.1
    # No model call was made: the ledger knows no price, and the plan never says the cost is 0.
    cost = plan["cost"]
    assert cost["priced"] is False and cost["per_run"]["usd"] is None and cost["both_runs"]["usd"] is None
    assert cost["measured_conversations"] == 12 * TRIALS and cost["per_conversation"]["model_calls"] == 0
    text = invoke(["plan", "--baseline", "coin-1", "--db", coin_runs, "--delta", "0.1"]).stdout
    assert f"needed: {design['trials']} trials per task" in text and "unknown" in text


def test_plan_errors(coin_runs: str, tmp_path: Path) -> None:
    runner = CliRunner()
    for args, message in (
        (["--baseline", "nope", "--delta", "0.05"], "no run 'nope'"),
        (["--baseline", "coin-1", "--delta", "0"], "--delta must be"),
        (["--baseline", "coin-1", "--delta", "1"], "--delta must be"),
        (["--baseline", "coin-1", "--delta", "-0.1"], "--delta must be"),
        (["--baseline", "coin-1", "--delta", "0.1", "--power", "1.5"], "--power"),
    ):
        result = runner.invoke(bench_cli(["trust"]), ["plan", *args, "--db", coin_runs])
        assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output, result.output
    missing = runner.invoke(bench_cli(["trust"]), ["plan", "--baseline", "x", "--delta", "0.1", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 1 and "no results database" in missing.output
    with sqlite3.connect(coin_runs) as conn:  # a run whose every conversation ended in an infrastructure error
        conn.execute("update conversations set termination_reason = 'infrastructure_error' where run_id = 'gold'")
    empty = runner.invoke(bench_cli(["trust"]), ["plan", "--baseline", "gold", "--delta", "0.1", "--db", coin_runs])
    assert empty.exit_code == 1 and "no finished agent conversation" in empty.output


def test_compare_says_within_noise(coin_runs: str) -> None:
    same = json.loads(invoke(["compare", "coin-1", "coin-2", "--db", coin_runs, "--format", "json"]).stdout)
    noise = same["noise"]
    # The same agent under two seeds: whatever the difference, it is within noise.
    assert noise["difference"] == same["pass_hat_k"]["1"]["difference"] and noise["within_noise"] is True
    assert noise["mdd"] > abs(noise["difference"]) and noise["verdict"] == "within noise"
    text = invoke(["compare", "coin-1", "coin-2", "--db", coin_runs]).stdout
    assert "WITHIN NOISE" in text and f"these runs detect {noise['mdd']:.3f}" in text
    assert "## Noise: pass^1 difference" in invoke(["compare", "coin-1", "coin-2", "--db", coin_runs, "--format", "markdown"]).stdout
    gold = json.loads(invoke(["compare", "coin-1", "gold", "--db", coin_runs, "--format", "json"]).stdout)["noise"]
    assert gold["within_noise"] is False and gold["verdict"] == "beyond noise" and gold["low"] > 0
