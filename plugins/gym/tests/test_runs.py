"""Episodes stored as a run (db=): `bench runs` and `bench report` show them; the other side's model calls are
ledgered and cached through bench's model hub; what the run records about the policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_gym.policies import GoldReplayPolicy
from click.testing import CliRunner
from gym_episodes import play

from bench_kernel import Store
from bench_kernel.testing import Reply, bench_cli


def bench(*args: str) -> str:
    result = CliRunner().invoke(bench_cli(["gym"]), list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_stored_episodes_are_a_run_that_bench_runs_and_bench_report_show(make_env: Any, tmp_path: Path) -> None:
    db = tmp_path / "gym.db"
    env = make_env(domain="mock", db=db)
    rewards = [play(env, GoldReplayPolicy(), options={"task_id": t})[0] for t in env.unwrapped.task_ids]
    run_id = env.unwrapped.run_id
    env.close()
    assert run_id.startswith("mock-gym-policy-")
    assert f"{run_id}  complete  {len(rewards)} conversations  mean reward 1.000" in bench("runs", "--db", str(db))
    report = bench("report", run_id, "--db", str(db), "--format", "json")
    figures = json.loads(report)
    assert figures["header"]["agent"] == "gym-policy" and figures["header"]["user"] == "scripted"
    assert figures["average_reward"]["value"] == 1.0 and figures["average_reward"]["n"] == len(rewards)


def test_a_stored_episode_is_the_conversation_the_policy_had(make_env: Any, tmp_path: Path) -> None:
    db = tmp_path / "gym.db"
    env = make_env(domain="mock", task_id="upgrade_by_email", db=db)
    observation, info = env.reset()
    seen = list(observation["messages"])
    policy = GoldReplayPolicy()
    policy.start(observation, info)
    while True:
        action = policy.act(observation, info)
        seen.append({"role": "assistant", **action})
        observation, reward, terminated, truncated, info = env.step(action)
        seen += observation["messages"]
        if terminated or truncated:
            break
    assert info["stored"] and reward == 1.0
    env.close()
    store = Store(db)
    try:
        row = store.conversations(info["run_id"])[0]
        messages = [json.loads(m["message_json"]) for m in store.messages(info["conversation_id"])]
    finally:
        store.close()
    assert (row["reward"], row["agent"], row["agent_cost"], row["termination_reason"]) == (1.0, "gym-policy", None, "user_stop")
    assert [m["role"] for m in messages] == [m["role"] for m in seen]
    assert [m.get("content") for m in messages if m["role"] == "user"] == [m["content"] for m in seen if m["role"] == "user"]
    calls = [c["name"] for m in messages for c in m.get("tool_calls") or []]
    assert calls == ["find_customer_by_email", "change_plan"]


def test_the_same_configuration_resumes_the_run_with_the_next_trials(make_env: Any, tmp_path: Path) -> None:
    db = tmp_path / "gym.db"
    first = make_env(domain="mock", task_id="upgrade_by_email", db=db)
    play(first, GoldReplayPolicy())
    first.close()
    second = make_env(domain="mock", task_id="upgrade_by_email", db=db)
    _, info, _ = play(second, GoldReplayPolicy())
    assert (info["run_id"], info["trial"]) == (first.unwrapped.run_id, 1)
    named = make_env(domain="mock", task_id="upgrade_by_email", db=db, policy_name="ppo-step-100")
    assert named.unwrapped.run_id.startswith("mock-ppo-step-100-")


def test_nothing_is_stored_without_a_database(make_env: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    env = make_env(domain="mock", task_id="upgrade_by_email")
    _, info, _ = play(env, GoldReplayPolicy())
    assert info["stored"] is False
    env.close()
    assert list(tmp_path.iterdir()) == []


def customer(body: dict[str, Any]) -> Reply:
    said = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return Reply.text("Thanks, that is all. ###STOP###" if said else "Move me to Fiber 1000; I am ada.okafor@example.net.")


def test_the_model_played_customer_is_ledgered_and_cached(make_env: Any, fake_openai_server: Any, tmp_path: Path) -> None:
    server = fake_openai_server(customer)
    db = tmp_path / "gym.db"
    settings = {
        "domain": "mock",
        "task_id": "upgrade_by_email",
        "user": "llm-user",
        "plugins": ["llm"],
        "db": db,
        "cache": True,
        "models": {"user": {"model": "fake-model", "base_url": server.base_url}},
    }
    env = make_env(**settings)
    reward, info, _ = play(env, GoldReplayPolicy(), seed=0)
    env.close()
    assert reward == 1.0 and len(server.completions) == 2
    store = Store(db)
    try:
        ledger = list(store.db.query("select role, conversation_id from llm_calls"))
    finally:
        store.close()
    assert ledger == [{"role": "user", "conversation_id": info["conversation_id"]}] * 2
    again = make_env(**settings, run_id="replayed")
    reward, _, _ = play(again, GoldReplayPolicy(), seed=0)  # trial 0 again: the same seed, the same requests
    assert reward == 1.0 and len(server.completions) == 2  # answered from the cache
