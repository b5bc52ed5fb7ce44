"""The vector form: N conversations of one run on one event loop, stepped together, autoreset next-step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench_gym.policies import GoldReplayPolicy, RandomPolicy, ScriptedCustomerPolicy

from bench_kernel import Store
from bench_kernel.testing import Reply

pytest.importorskip("gymnasium", reason="gymnasium is not installed: pip install bench-gym (it depends on it)")
import numpy as np
from bench_gym.vector import AgentVectorEnv, env_info

N = 8


@pytest.fixture
def make_vec(gymnasium: Any) -> Iterator[Any]:
    made: list[Any] = []

    def make(env_id: str = "bench/Agent-v0", num_envs: int = N, **kwargs: Any) -> Any:
        envs = gymnasium.make_vec(env_id, num_envs=num_envs, **kwargs)
        made.append(envs)
        return envs

    yield make
    for envs in made:
        envs.close()


def run_policies(envs: Any, policy_type: Any, steps: int, seed: int = 0) -> tuple[list[float], list[tuple[Any, ...]]]:
    """Step every environment with its own policy; the rewards of finished episodes and every step's result."""
    observations, infos = envs.reset(seed=seed)
    policies = [policy_type() for _ in range(envs.num_envs)]
    for i, policy in enumerate(policies):
        policy.start(observations[i], env_info(infos, i))
    ended = np.zeros(envs.num_envs, dtype=np.bool_)
    rewards, results = [], []
    for _ in range(steps):
        result = envs.step([policies[i].act(observations[i], None) for i in range(envs.num_envs)])
        observations, reward, terminated, truncated, infos = result
        results.append(result)
        for i in range(envs.num_envs):
            if ended[i]:
                policies[i].start(observations[i], env_info(infos, i))
            elif terminated[i] or truncated[i]:
                rewards.append(float(reward[i]))
        ended = terminated | truncated
    return rewards, results


def test_make_vec_gives_bench_vector_env_and_gold_replay_earns_one_throughout(make_vec: Any) -> None:
    envs = make_vec(domain="mock")
    assert isinstance(envs, AgentVectorEnv) and envs.num_envs == N
    rewards, _ = run_policies(envs, GoldReplayPolicy, steps=30)
    assert len(rewards) > N and set(rewards) == {1.0}


def test_autoreset_is_next_step(make_vec: Any) -> None:
    envs = make_vec(domain="mock", task_id="plan_price_question")
    _, results = run_policies(envs, GoldReplayPolicy, steps=6)
    ends = [i for i, (_, _, terminated, truncated, _) in enumerate(results) if terminated.all() or truncated.all()]
    assert ends, "every environment plays the same task: they end together"
    observations, rewards, terminated, truncated, infos = results[ends[0] + 1]
    assert all("tools" in o for o in observations) and not rewards.any() and not (terminated | truncated).any()
    assert list(infos["trial"]) == [N + i for i in range(N)]  # the next trials after 0..N-1


def test_seeds_name_the_trials_of_the_environments(make_vec: Any) -> None:
    envs = make_vec(domain="mock", task_id="upgrade_by_email")
    _, infos = envs.reset(seed=100)
    assert list(infos["trial"]) == list(range(100, 100 + N))
    _, infos = envs.reset(seed=[5, *range(20, 20 + N - 1)])
    assert infos["trial"][0] == 5 and env_info(infos, 0)["task_id"] == "upgrade_by_email"


def test_episodes_are_stored_as_one_run(make_vec: Any, tmp_path: Path) -> None:
    db = tmp_path / "vector.db"
    envs = make_vec(domain="airline", db=db)
    rewards, _ = run_policies(envs, GoldReplayPolicy, steps=12)
    run_id = envs.unwrapped.run_id
    envs.close()
    store = Store(db)
    try:
        rows = store.conversations(run_id)
        assert len(rows) == len(rewards) and {r["reward"] for r in rows} == {1.0}
        assert store.run(run_id).config["agent"] == "gym-policy"
    finally:
        store.close()


def test_random_actions_from_the_batched_action_space(make_vec: Any) -> None:
    envs = make_vec(domain="mock", max_steps=40)
    envs.reset(seed=3)
    envs.action_space.seed(3)
    for _ in range(25):
        _, rewards, terminated, _truncated, _ = envs.step(envs.action_space.sample())
        assert rewards.shape == (N,) and terminated.dtype == np.bool_


def test_the_random_policy_in_a_vector(make_vec: Any) -> None:
    envs = make_vec(domain="airline", max_steps=40)
    rewards, _ = run_policies(envs, lambda: RandomPolicy(seed=1), steps=20)
    assert rewards and set(rewards) <= {0.0, 1.0}


def test_the_user_side_vector(make_vec: Any) -> None:
    envs = make_vec("bench/User-v0", domain="telecom")
    rewards, _ = run_policies(envs, ScriptedCustomerPolicy, steps=25)
    assert len(rewards) >= N and set(rewards) == {1.0}


def customer(body: dict[str, Any]) -> Reply:
    said = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return Reply.text("Thank you, that is all. ###STOP###" if said else "I want the Fiber 1000 plan, email ada.okafor@example.net.")


def test_the_other_sides_model_calls_overlap_on_the_loop(make_vec: Any, fake_openai_server: Any) -> None:
    server = fake_openai_server(customer, latency_s=0.05)
    envs = make_vec(
        domain="mock",
        task_id="upgrade_by_email",
        user="llm-user",
        plugins=["llm"],
        models={"user": {"model": "fake-model", "base_url": server.base_url}},
    )
    observations, _ = envs.reset(seed=0)
    assert all("Fiber 1000" in o["messages"][-1]["content"] for o in observations)
    assert server.max_in_flight == N  # every environment's customer was asked at once
    _, _rewards, terminated, _, infos = envs.step(["Done."] * N)
    assert terminated.all() and list(infos["termination"]) == ["user_stop"] * N


def test_a_batch_that_cannot_happen_is_refused_before_any_of_it_does(make_vec: Any) -> None:
    envs = make_vec(domain="mock", task_id="upgrade_by_email", num_envs=2)
    _, infos = envs.reset(seed=0)
    with pytest.raises(ValueError, match="trial 5 of task 'upgrade_by_email' is in play"):
        envs.reset(seed=[5, 5])
    with pytest.raises(ValueError, match="one task id or 2 of them"):
        envs.reset(options={"task_id": ["upgrade_by_email"]})
    _, _, terminated, _, infos = envs.step(["Is there anything else?"] * 2)  # the episodes of the first reset go on
    assert terminated.all() and list(infos["trial"]) == [0, 1]


def test_no_episode_starts_once_the_cost_cap_is_reached(make_vec: Any, gymnasium: Any) -> None:
    from bench_kernel import BudgetExceededError

    envs = make_vec(domain="mock", num_envs=2, max_cost=0.0)
    with pytest.raises(BudgetExceededError, match="cost cap"):
        envs.reset()
