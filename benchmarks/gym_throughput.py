"""bench-gym's vector form: steps per second per core with 256 environments in one process, on bench's event loop.

    python benchmarks/gym_throughput.py [--envs 256] [--steps 200] [--latency-s 0.1] [--data-dir DIR]

1. Offline (CPU bound): `gymnasium.make_vec("bench/Agent-v0", num_envs=N, ...)` against bench's scripted user on the
   mock domain, the airline domain's own suite and, when found, tau2's airline data (--data-dir, $BENCH_TAU2_DATA_DIR
   or ../shared/reference/tau2), with the gold-replay policy (every episode should earn 1.0) and the random policy.
   A step is one policy action in one environment (N per `envs.step`); episodes autoreset (next-step). Steps per
   second per core = steps / CPU seconds of this process (both of its threads: the caller's and the loop's), which
   does not depend on what else the machine runs; wall steps/s is printed beside it.
2. Overlap: the mock domain with bench-llm's model-played customer (`llm-user`) behind a fake OpenAI server in a
   process of its own, answering after `latency_s`. Every step waits for N customer replies; done one at a time
   they would take N x latency, overlapped on the loop about one latency: the ideal is N / latency steps per second.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_gym
import gymnasium
import numpy as np
from bench_gym.policies import GoldReplayPolicy, RandomPolicy
from bench_gym.vector import env_info

REPO = Path(__file__).resolve().parents[1]
SERVER = """
import sys
from bench_kernel.testing import FakeOpenAIServer, Reply

def customer(body):
    said = sum(1 for m in body["messages"] if m["role"] == "assistant")  # the customer's own earlier turns
    if said >= 2:
        return Reply.text("Thank you, that is all. ###STOP###")
    return Reply.text("I want the Fiber 1000 plan; my email is ada.okafor@example.net.")

server = FakeOpenAIServer(customer, latency_s=float(sys.argv[1]), record=False).start()
print(server.base_url, flush=True)
sys.stdin.read()
server.stop()
"""


def tau2_airline(given: str | None) -> Path | None:
    """tau2's airline directory, or None."""
    for candidate in (given, os.environ.get("BENCH_TAU2_DATA_DIR"), REPO / ".." / "shared" / "reference" / "tau2"):
        if candidate is None:
            continue
        for path in (Path(candidate), Path(candidate) / "airline"):
            if (path / "db.json").is_file():
                return path.resolve()
    return None


def measure(envs: Any, make_policy: Callable[[int], Any], steps: int) -> dict[str, float]:
    """Step every environment `steps` times with its policy; steps/s per core and wall, episodes, mean reward."""
    n = envs.num_envs
    observations, infos = envs.reset(seed=0)
    policies = [make_policy(i) for i in range(n)]
    for i, policy in enumerate(policies):
        policy.start(observations[i], env_info(infos, i))
    ended = np.zeros(n, dtype=np.bool_)
    rewards: list[float] = []
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        actions = [policies[i].act(observations[i], None) for i in range(n)]
        observations, reward, terminated, truncated, infos = envs.step(actions)
        for i in range(n):
            if ended[i]:
                policies[i].start(observations[i], env_info(infos, i))
            elif terminated[i] or truncated[i]:
                rewards.append(float(reward[i]))
        ended = terminated | truncated
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "steps": steps * n,
        "per_core": steps * n / cpu,
        "wall": steps * n / wall,
        "episodes": len(rewards),
        "mean_reward": float(np.mean(rewards)) if rewards else float("nan"),
        "cpu_us": cpu / (steps * n) * 1e6,
    }


def report(label: str, figures: dict[str, float]) -> None:
    print(
        f"{label:34} {figures['per_core']:8.0f} steps/s per core  {figures['wall']:8.0f} wall  "
        f"{figures['cpu_us']:6.1f} us CPU/step  {figures['episodes']:6.0f} episodes  mean reward {figures['mean_reward']:.3f}",
        flush=True,
    )


def offline(n: int, steps: int, data_dir: Path | None) -> None:
    suites: list[tuple[str, dict[str, Any]]] = [("mock", {"domain": "mock"}), ("airline (own suite)", {"domain": "airline"})]
    if data_dir is not None:
        suites.append(("airline (tau2 data)", {"domain": "airline", "data_dir": str(data_dir)}))
    else:
        print("tau2 airline data not found: skipping it (--data-dir DIR)")
    for label, kwargs in suites:
        started = time.perf_counter()
        envs = gymnasium.make_vec(bench_gym.AGENT_ENV_ID, num_envs=n, **kwargs)
        print(f"{label}: {n} environments made in {time.perf_counter() - started:.2f}s")
        try:
            report(f"  {label}, gold replay", measure(envs, lambda i: GoldReplayPolicy(), steps))
            report(f"  {label}, random", measure(envs, lambda i: RandomPolicy(seed=i), steps))
        finally:
            envs.close()


def overlap(n: int, steps: int, latency_s: float) -> None:
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(latency_s)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        model = {"model": "fake-model", "base_url": base_url, "timeout_s": 120}
        envs = gymnasium.make_vec(
            bench_gym.AGENT_ENV_ID, num_envs=n, domain="mock", task_id="upgrade_by_email", user="llm-user", plugins=["llm"], models={"user": model}
        )
        try:
            figures = measure(envs, lambda i: GoldReplayPolicy(), steps)
        finally:
            envs.close()
        report(f"mock, llm-user at {latency_s:g}s latency", figures)
        print(f"  ideal {n / latency_s:.0f} steps/s (every customer reply of a step overlapped); one at a time: {1 / latency_s:.0f} steps/s")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200, help="vector steps per measurement (each one step of every env)")
    parser.add_argument("--latency-s", type=float, default=0.1)
    parser.add_argument("--overlap-steps", type=int, default=30)
    parser.add_argument("--data-dir")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; {args.envs} environments; {args.steps} vector steps per measurement")
    offline(args.envs, args.steps, tau2_airline(args.data_dir))
    overlap(args.envs, args.overlap_steps, args.latency_s)


if __name__ == "__main__":
    main()
