"""Many episodes in one process: N conversations of one bench run on one event loop, stepped together.

    envs = gymnasium.make_vec("bench/Agent-v0", num_envs=256, domain="mock")   # this class (the vector entry point)
    observations, infos = envs.reset(seed=0)
    observations, rewards, terminated, truncated, infos = envs.step([policy(o) for o in observations])

Not gymnasium's subprocess vector: each `step` hands every action to its conversation, and returns once each of
them waits for the policy again or has ended, so the other parties' turns (model calls included) of all N
conversations overlap on bench's loop, as in `bench run --concurrency N`. Sub-environment i of `reset(seed=S)`
plays trial S + i. Autoreset is gymnasium's default, next-step: the step after an episode ended ignores that
environment's action and starts its next episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from .config import GymConfig, Side, gym_config
from .driver import Act, Driver, EpisodeOver, Order, Reset
from .envs import draw_task, update_action_space
from .observations import Outcome
from .spaces import ChatAction, ChatObservation


class BenchVectorEnv(VectorEnv[Any, Any, Any]):
    """`num_envs` episodes of one bench run, the policy on `side` in each."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012 - gymnasium's, read from the class
    side: ClassVar[Side] = "agent"

    def __init__(self, num_envs: int = 1, *, domain: str, **kwargs: Any) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, not {num_envs}")
        self.num_envs = num_envs
        self.config: GymConfig = gym_config(domain, side=self.side, **kwargs)
        self._driver = Driver(self.config, slots=num_envs)
        self.single_observation_space = ChatObservation()
        self.single_action_space = ChatAction()
        self.observation_space = gymnasium.spaces.Tuple([ChatObservation() for _ in range(num_envs)])
        self.action_space = gymnasium.spaces.Tuple([ChatAction() for _ in range(num_envs)])
        self._rngs = [np.random.default_rng([self.config.seed, i]) for i in range(num_envs)]
        self._ended = np.zeros(num_envs, dtype=np.bool_)

    @property
    def run_id(self) -> str:
        """The bench run the episodes belong to."""
        return self._driver.run_id

    @property
    def task_ids(self) -> list[str]:
        """The tasks episodes are drawn from."""
        return list(self._driver.tasks)

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[dict[str, Any], ...], dict[str, Any]]:
        """Start an episode in every environment (`options["task_id"]`: one task id, or one per environment)."""
        seeds = _seeds(seed, self.num_envs)
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i] = np.random.default_rng(s)
        task_ids = (options or {}).get("task_id")
        if task_ids is not None and not isinstance(task_ids, str) and len(task_ids) != self.num_envs:
            raise ValueError(f"options['task_id'] is one task id or {self.num_envs} of them, not {len(task_ids)}")
        orders: dict[int, Order] = {i: Reset(self._task(i, task_ids), seeds[i]) for i in range(self.num_envs)}
        outcomes = self._advance(orders)
        self._ended[:] = False
        infos: dict[str, Any] = {}
        for i, outcome in outcomes.items():
            update_action_space(self._action_space(i), outcome)
            infos = self._add_info(infos, outcome.info, i)
        return tuple(outcomes[i].observation for i in range(self.num_envs)), infos

    def step(self, actions: Sequence[Any]) -> tuple[tuple[dict[str, Any], ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Each environment's action (ignored where the last step ended an episode: that environment starts its next)."""
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        orders: dict[int, Order] = {i: Reset(self._task(i, None)) if self._ended[i] else Act(actions[i]) for i in range(self.num_envs)}
        outcomes = self._advance(orders)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, outcome in outcomes.items():
            if isinstance(orders[i], Reset):
                update_action_space(self._action_space(i), outcome)
            rewards[i], terminated[i], truncated[i] = outcome.reward, outcome.terminated, outcome.truncated
            infos = self._add_info(infos, outcome.info, i)
        self._ended = terminated | truncated
        return tuple(outcomes[i].observation for i in range(self.num_envs)), rewards, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        """End the run (episodes in play are dropped, finished ones stay stored) and stop its event loop."""
        self._driver.close()

    def _action_space(self, i: int) -> ChatAction:
        spaces = self.action_space
        assert isinstance(spaces, gymnasium.spaces.Tuple)
        space = spaces[i]
        assert isinstance(space, ChatAction)
        return space

    def _task(self, i: int, task_ids: str | Sequence[str] | None) -> str:
        if isinstance(task_ids, str):
            return task_ids
        if task_ids is not None:
            return task_ids[i]
        return draw_task(self.task_ids, self._rngs[i])

    def _advance(self, orders: dict[int, Order]) -> dict[int, Outcome]:
        try:
            return self._driver.advance(orders)
        except EpisodeOver as exc:
            raise gymnasium.error.ResetNeeded(str(exc)) from None


class AgentVectorEnv(BenchVectorEnv):
    """The vector form of `bench/Agent-v0` (its `vector_entry_point`)."""

    side: ClassVar[Side] = "agent"


class UserVectorEnv(BenchVectorEnv):
    """The vector form of `bench/User-v0` (its `vector_entry_point`)."""

    side: ClassVar[Side] = "user"


def _seeds(seed: int | Sequence[int | None] | None, n: int) -> list[int | None]:
    if seed is None:
        return [None] * n
    if isinstance(seed, int | np.integer):
        return [int(seed) + i for i in range(n)]
    if len(seed) != n:
        raise ValueError(f"expected {n} seeds, got {len(seed)}")
    return list(seed)


def env_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Environment i's own info out of a vector's batched infos (what the single environment's step would give)."""
    found: dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_") or not infos.get(f"_{key}", np.ones(i + 1, dtype=np.bool_))[i]:
            continue
        item = env_info(value, i) if isinstance(value, dict) else value[i]
        found[key] = item.item() if isinstance(item, np.generic) else item
    return found
