"""bench/Agent-v0: the policy plays the agent against bench's scripted user; bench's reward at the end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_gym.policies import DoNothingPolicy, GoldReplayPolicy, RandomPolicy
from gym_episodes import play

from bench_kernel import ConfigError, RewardInfo, Store, load_profile


def rewards_by_task(env: Any, policy_factory: Any) -> dict[str, float]:
    return {task_id: play(env, policy_factory(), options={"task_id": task_id})[0] for task_id in env.unwrapped.task_ids}


def stored(db: Path, run_id: str) -> list[dict[str, Any]]:
    store = Store(db)
    try:
        return list(store.conversations(run_id))
    finally:
        store.close()


def test_gold_replay_earns_one_on_every_tau2_airline_task(make_env: Any, tau2_airline: Path) -> None:
    env = make_env(domain="airline", data_dir=tau2_airline)
    assert len(env.unwrapped.task_ids) == 50
    rewards = rewards_by_task(env, GoldReplayPolicy)
    assert rewards == dict.fromkeys(rewards, 1.0)


def test_one_task_by_id_as_the_issue_writes_it(make_env: Any, tau2_airline: Path) -> None:
    env = make_env(domain="airline", data_dir=str(tau2_airline), task_id="4")
    reward, info, steps = play(env, GoldReplayPolicy())
    assert (reward, info["termination"], info["task_id"]) == (1.0, "user_stop", "4")
    assert isinstance(info["reward_info"], RewardInfo) and info["reward_info"].reward == 1.0
    assert set(info["components"]) >= {"DB", "COMMUNICATE"} and info["components"]["DB"] == 1.0
    assert steps == 6 + 1  # its six gold actions, then the closing words


@pytest.mark.parametrize("domain", ["mock", "airline"])
def test_gold_replay_earns_one_on_every_task_of_the_packaged_suites(make_env: Any, domain: str) -> None:
    rewards = rewards_by_task(make_env(domain=domain), GoldReplayPolicy)
    assert rewards and rewards == dict.fromkeys(rewards, 1.0)


def do_nothing_against_baseline(make_env: Any, tmp_path: Path, **kwargs: Any) -> tuple[dict[str, float], dict[str, float]]:
    db = tmp_path / "gym.db"
    env = make_env(db=db, baseline=True, **kwargs)
    rewards = rewards_by_task(env, DoNothingPolicy)
    run_id = env.unwrapped.run_id
    env.close()
    rows = stored(db, run_id)
    return rewards, {r["task_id"]: r["reward"] for r in rows if r["arm"] == "baseline"}


@pytest.mark.parametrize("domain", ["mock", "airline"])
def test_do_nothing_earns_what_the_do_nothing_baseline_earns(make_env: Any, tmp_path: Path, domain: str) -> None:
    rewards, baseline = do_nothing_against_baseline(make_env, tmp_path, domain=domain)
    assert rewards == baseline


def test_do_nothing_earns_the_baseline_on_tau2_airline(make_env: Any, tmp_path: Path, tau2_airline: Path) -> None:
    rewards, baseline = do_nothing_against_baseline(make_env, tmp_path, domain="airline", data_dir=tau2_airline)
    assert rewards == baseline
    assert 0 < sum(rewards.values()) < len(rewards)  # some tasks pass by doing nothing, most do not


def test_the_first_observation_has_the_conversation_tools_and_instructions(make_env: Any) -> None:
    env = make_env(domain="mock", task_id="upgrade_by_email")
    observation, info = env.reset()
    assert [m["role"] for m in observation["messages"]] == ["assistant", "user"]  # the greeting, the customer
    assert "ada.okafor@example.net" in observation["messages"][1]["content"]
    assert {t["function"]["name"] for t in observation["tools"]} >= {"find_customer_by_email", "change_plan"}
    assert observation["policy"] in observation["instructions"] and observation["policy"] == info["policy"]
    assert env.observation_space.contains(observation)
    assert info["task"].id == "upgrade_by_email" and info["mode"] == "default"
    call = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "find_customer_by_email", "arguments": json.dumps({"email": "ada.okafor@example.net"})},
            }
        ],
    }
    observation, reward, terminated, truncated, info = env.step(call)
    assert set(observation) == {"messages"}
    assert observation["messages"] == [{"role": "tool", "tool_call_id": "c1", "content": observation["messages"][0]["content"]}]
    assert json.loads(observation["messages"][0]["content"])["id"] == "C-1001"
    assert (reward, terminated, truncated) == (0.0, False, False)


def test_an_action_may_be_json_text_or_plain_text(make_env: Any) -> None:
    env = make_env(domain="mock", task_id="upgrade_by_email")
    env.reset()
    observation, *_ = env.step(json.dumps({"tool_calls": [{"name": "find_customer_by_email", "arguments": {"email": "ada.okafor@example.net"}}]}))
    assert observation["messages"][0]["role"] == "tool"
    observation, _reward, terminated, _truncated, info = env.step("Anything else?")
    assert terminated and info["termination"] == "user_stop"


def test_no_user_mode_the_agent_works_from_the_ticket_and_calls_done(make_env: Any) -> None:
    env = make_env(domain="mock", mode="no-user")
    rewards = rewards_by_task(env, GoldReplayPolicy)
    assert rewards == dict.fromkeys(rewards, 1.0)
    observation, info = env.reset(options={"task_id": "upgrade_by_email"})
    assert observation["messages"] == [] and observation["ticket"] == info["task"].ticket
    assert info["done_tool"] in {t["function"]["name"] for t in observation["tools"]}
    _, reward, terminated, _, info = env.step({"tool_calls": [{"name": info["done_tool"], "arguments": {}}]})
    assert terminated and info["termination"] == "agent_stop" and reward == 0.0


def test_text_alone_in_the_no_user_mode_is_the_agents_error_as_in_bench_run(make_env: Any) -> None:
    env = make_env(domain="mock", mode="no-user", task_id="upgrade_by_email")
    env.reset()
    _, reward, terminated, truncated, info = env.step("I will look into it.")
    assert (reward, terminated, truncated, info["termination"]) == (0.0, True, False, "agent_error")
    assert "no-user mode" in info["error"]


def test_a_malformed_action_ends_the_episode_as_the_agents_error(make_env: Any) -> None:
    env = make_env(domain="mock", task_id="upgrade_by_email")
    env.reset()
    _, reward, terminated, _, info = env.step({"tool_calls": [{"function": {"name": "change_plan", "arguments": "{oops"}}]})
    assert (reward, terminated, info["termination"]) == (0.0, True, "agent_error")
    assert "not valid JSON" in info["error"]
    env.reset()
    _, _, terminated, _, info = env.step({"role": "user", "content": "I am the customer now"})
    assert terminated and "role 'user'" in info["error"]


def test_an_action_of_another_type_is_a_programming_error(make_env: Any, gymnasium: Any) -> None:
    env = make_env(domain="mock", task_id="upgrade_by_email")
    env.reset()
    with pytest.raises(TypeError, match="not int"):
        env.step(42)
    observation, *_ = env.step("still here?")  # the episode was not touched
    assert observation["messages"]


def test_steps_outside_an_episode_need_a_reset(make_env: Any, gymnasium: Any) -> None:
    env = make_env(domain="mock", task_id="upgrade_by_email", disable_env_checker=True)
    with pytest.raises(gymnasium.error.ResetNeeded, match="reset"):
        env.unwrapped.step("hello")
    env.reset()
    *_, terminated, _, _ = env.step("Is there anything else?")
    assert terminated
    with pytest.raises(gymnasium.error.ResetNeeded, match="ended"):
        env.step("hello")


def test_the_step_limit_truncates(make_env: Any) -> None:
    env = make_env(domain="mock", task_id="upgrade_by_email", max_steps=4)
    env.reset()
    call = {"tool_calls": [{"name": "list_plans", "arguments": {}}]}
    steps = 0
    while True:
        _, reward, terminated, truncated, info = env.step(call)
        steps += 1
        if terminated or truncated:
            break
    assert (terminated, truncated, info["termination"], reward) == (False, True, "max_steps", 0.0)
    assert steps < 4  # bench counts every turn (the customer's, the environment's), not only the policy's


def test_a_seed_names_the_trial_and_the_episode_repeats(make_env: Any) -> None:
    env = make_env(domain="mock", seed=7)
    first = play(env, RandomPolicy(seed=1), seed=5)
    again = play(env, RandomPolicy(seed=1), seed=5)
    elsewhere = play(make_env(domain="mock", seed=7), RandomPolicy(seed=1), seed=5)
    assert first == again == elsewhere
    _, info = env.reset(seed=5)
    assert info["trial"] == 5
    assert info["seed"] == load_profile(None).conversation_seed(7, info["task_id"], 5)  # bench run's seed of that trial
    _, info = env.reset()
    assert info["trial"] == 6 or info["task_id"] != first[1]["task_id"]


def test_without_a_seed_episodes_are_the_next_trials_drawn_from_the_runs_seed(make_env: Any) -> None:
    def episodes(env: Any) -> list[tuple[str, int]]:
        found = []
        for _ in range(6):
            _, info = env.reset()
            found.append((info["task_id"], info["trial"]))
        return found

    one, two = episodes(make_env(domain="mock")), episodes(make_env(domain="mock"))
    assert one == two
    assert len({task for task, _ in one}) > 1
    counts: dict[str, int] = {}
    for task, trial in one:
        assert trial == counts.get(task, 0)
        counts[task] = trial + 1


def test_random_policy_episodes_end(make_env: Any, gymnasium: Any) -> None:
    env = make_env(domain="airline", max_steps=60)
    for seed in range(8):
        reward, info, _steps = play(env, RandomPolicy(seed=seed), seed=seed)
        assert info["termination"] in {"user_stop", "max_steps", "too_many_errors", "agent_error"}
        assert reward in (0.0, 1.0)
    space = env.action_space
    assert space.contains(space.sample())


def test_a_reset_in_the_middle_drops_the_episode(make_env: Any, tmp_path: Path) -> None:
    db = tmp_path / "gym.db"
    env = make_env(domain="mock", task_id="upgrade_by_email", db=db)
    env.reset()
    play(env, GoldReplayPolicy())
    run_id = env.unwrapped.run_id
    env.close()
    assert [(r["trial"], r["reward"]) for r in stored(db, run_id)] == [(1, 1.0)]


def test_shaping_is_off_unless_given(make_env: Any) -> None:
    seen: list[int] = []

    def per_message(messages: Any, info: Any) -> float:
        seen.append(len(messages))
        return 0.01 * len(messages)

    env = make_env(domain="mock", task_id="upgrade_by_email", shaping=per_message)
    env.reset()
    _, reward, _, _, info = env.step({"tool_calls": [{"name": "list_plans", "arguments": {}}]})
    assert reward == pytest.approx(0.01) and info["shaping"] == pytest.approx(0.01) and seen == [1]
    plain = make_env(domain="mock", task_id="upgrade_by_email")
    plain.reset()
    _, reward, _, _, info = plain.step({"tool_calls": [{"name": "list_plans", "arguments": {}}]})
    assert reward == 0.0 and "shaping" not in info


def test_unknown_arguments_and_tasks_are_refused_in_one_line(gymnasium: Any) -> None:
    with pytest.raises(ConfigError, match=r"unknown environment argument 'temperature'.*user_options"):
        gymnasium.make("bench/Agent-v0", domain="mock", temperature=0.3)
    with pytest.raises(ConfigError, match="unknown task ids"):
        gymnasium.make("bench/Agent-v0", domain="mock", task_id="nope")
    with pytest.raises(ConfigError, match="plugins="):
        gymnasium.make("bench/Agent-v0", domain="no_such_domain")
