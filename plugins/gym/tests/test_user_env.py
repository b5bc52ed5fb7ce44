"""bench/User-v0: the policy plays the customer (device tools included) against bench's oracle agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench_gym.policies import DoNothingPolicy, RandomPolicy, ScriptedCustomerPolicy
from gym_episodes import play

from bench_kernel import ConfigError
from bench_kernel.testing import Reply


def test_the_scripted_customer_earns_one_on_tau2_telecom(make_env: Any, tau2_telecom: Path) -> None:
    env = make_env("bench/User-v0", domain="telecom", data_dir=tau2_telecom)
    every = env.unwrapped.task_ids
    assert len(every) > 2000
    sample = every[::40]  # all of them take about 6 s (the benchmark's figure); a spread of 58 covers every intent
    rewards = {task_id: play(env, ScriptedCustomerPolicy(), options={"task_id": task_id})[0] for task_id in sample}
    assert rewards == dict.fromkeys(sample, 1.0)


def test_the_scripted_customer_earns_one_on_every_task_of_our_telecom_suite(make_env: Any) -> None:
    env = make_env("bench/User-v0", domain="telecom")
    rewards = {task_id: play(env, ScriptedCustomerPolicy(), options={"task_id": task_id})[0] for task_id in env.unwrapped.task_ids}
    assert rewards == dict.fromkeys(rewards, 1.0)


def test_the_customer_sees_the_scenario_its_device_tools_and_the_agent_as_its_user(make_env: Any) -> None:
    env = make_env("bench/User-v0", domain="telecom")
    task_id = next(t for t in env.unwrapped.task_ids if play(env, DoNothingPolicy(), options={"task_id": t})[0] == 0.0)
    observation, info = env.reset(options={"task_id": task_id})
    assert observation["messages"] == [{"role": "user", "content": "Hi! How can I help you today?"}]  # the agent's greeting
    assert observation["tools"] and "policy" not in observation
    assert info["task"].user_scenario.render() in observation["instructions"]
    assert info["stop_tokens"][0] == "###STOP###"
    policy = ScriptedCustomerPolicy()
    policy.start(observation, info)
    observation, *_ = env.step(policy.act(observation, info))
    asked = observation["messages"][-1]
    assert asked["role"] == "user" and "Please do this on your device" in asked["content"]
    device_call = policy.act(observation, info)
    observation, *_ = env.step(device_call)
    assert [m["role"] for m in observation["messages"]] == ["tool"]  # its own tool's result, nothing of the agent's tools
    assert observation["messages"][0]["tool_call_id"] == "gym-1"


def test_a_customer_who_leaves_at_once_fails_a_task_that_needs_it(make_env: Any) -> None:
    env = make_env("bench/User-v0", domain="telecom")
    rewards = [play(env, DoNothingPolicy(), options={"task_id": t}) for t in env.unwrapped.task_ids[:10]]
    assert {info["termination"] for _, info, _ in rewards} == {"user_stop"}
    assert [steps for _, _, steps in rewards] == [1] * 10
    assert any(reward == 0.0 for reward, _, _ in rewards)


def test_random_customers_end(make_env: Any) -> None:
    env = make_env("bench/User-v0", domain="mock", max_steps=80)
    for seed in range(6):
        _reward, info, _ = play(env, RandomPolicy(seed=seed), seed=seed)
        assert info["termination"] in {"user_stop", "max_steps", "too_many_errors"}


def test_the_user_side_has_no_no_user_mode(gymnasium: Any) -> None:
    with pytest.raises(ConfigError, match="no-user mode"):
        gymnasium.make("bench/User-v0", domain="mock", mode="no-user")


def test_the_other_side_is_named_as_in_bench_run(make_env: Any, gymnasium: Any) -> None:
    env = make_env("bench/User-v0", domain="mock", agent="do-nothing", task_id="upgrade_by_email")
    observation, _info = env.reset()
    observation, *_ = env.step("I want the Fiber 1000 plan.")
    assert observation["messages"] == [{"role": "user", "content": "I'm sorry, I can't help with that."}]
    assert env.unwrapped.run_id.startswith("mock-do-nothing-")
    with pytest.raises(ConfigError, match="unknown environment argument 'user'"):
        gymnasium.make("bench/User-v0", domain="mock", user="scripted")


def agent(body: dict[str, Any]) -> Reply:
    heard = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return Reply.text(f"You said {len(heard)} things; how can I help?")


def test_a_model_agent_on_the_other_side(make_env: Any, fake_openai_server: Any) -> None:
    server = fake_openai_server(agent)
    env = make_env(
        "bench/User-v0",
        domain="mock",
        task_id="plan_price_question",
        agent="llm-fc",
        plugins=["llm"],
        models={"agent": {"model": "fake-model", "base_url": server.base_url}},
    )
    env.reset(seed=0)
    observation, *_ = env.step("What does the Fiber 1000 plan cost?")
    assert observation["messages"] == [{"role": "user", "content": "You said 1 things; how can I help?"}]
    _, reward, terminated, _, info = env.step("Never mind. ###STOP###")
    assert terminated and info["termination"] == "user_stop" and reward == 0.0
    assert server.completions[0]["seed"] == info["seed"]  # the conversation's seed reaches the model
