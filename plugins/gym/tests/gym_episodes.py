"""Helpers the tests share (imported by name: conftest puts this folder on sys.path)."""

from __future__ import annotations

from typing import Any


def play(env: Any, policy: Any, **reset: Any) -> tuple[float, dict[str, Any], int]:
    """One whole episode: (the final reward, the final info, the steps it took)."""
    observation, info = env.reset(**reset)
    policy.start(observation, info)
    steps = 0
    while True:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation, info))
        steps += 1
        if terminated or truncated:
            return float(reward), info, steps
