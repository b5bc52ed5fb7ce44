"""`bench/Agent-v0` and `bench/User-v0`: one conversation per episode, the policy on one side, bench on the other.

    env = gymnasium.make("bench/Agent-v0", domain="airline", data_dir=..., task_id="0")
    observation, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step({"role": "assistant", "content": "Hello"})

An episode is the trial `seed` of a task when `reset(seed=...)` names one, else the task's next unplayed trial;
its conversation seed derives from the run's seed, the task and the trial, as in `bench run`. The task is
`options["task_id"]`, else drawn from the environment's tasks with `np_random` (seeded from the run's seed until
`reset(seed=...)` seeds it).
"""

from __future__ import annotations

from typing import Any, ClassVar, SupportsFloat

import gymnasium

from .config import GymConfig, Side, gym_config
from .driver import Act, Driver, EpisodeOver, Order, Reset
from .observations import Outcome
from .spaces import ChatAction, ChatObservation


class BenchEnv(gymnasium.Env[dict[str, Any], Any]):
    """A bench domain as a gymnasium environment; the policy plays `side`."""

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium's own attribute, read from the class
    side: ClassVar[Side] = "agent"

    def __init__(self, domain: str, **kwargs: Any) -> None:
        self.config: GymConfig = gym_config(domain, side=self.side, **kwargs)
        self._driver = Driver(self.config, slots=1)
        self.observation_space = ChatObservation()
        self.action_space = ChatAction()

    @property
    def run_id(self) -> str:
        """The bench run this environment's episodes belong to (`bench report RUN` when they are stored)."""
        return self._driver.run_id

    @property
    def task_ids(self) -> list[str]:
        """The tasks episodes are drawn from."""
        return list(self._driver.tasks)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: the conversation up to the policy's first turn, with the tools and instructions."""
        first = self._np_random is None
        super().reset(seed=seed if seed is not None or not first else self.config.seed)
        options = options or {}
        task_id = options.get("task_id") or draw_task(self.task_ids, self.np_random)
        outcome = self._advance(Reset(task_id, options.get("trial", seed)))
        assert isinstance(self.action_space, ChatAction)
        update_action_space(self.action_space, outcome)
        return outcome.observation, outcome.info

    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """Play the policy's action; return what arrived until its next turn (or the end, with bench's reward)."""
        outcome = self._advance(Act(action))
        return outcome.observation, outcome.reward, outcome.terminated, outcome.truncated, outcome.info

    def close(self) -> None:
        """End the run (episodes in play are dropped, finished ones stay stored) and stop its event loop."""
        self._driver.close()
        super().close()

    def _advance(self, order: Order) -> Outcome:
        try:
            return self._driver.advance({0: order})[0]
        except EpisodeOver as exc:
            raise gymnasium.error.ResetNeeded(str(exc)) from None


class AgentEnv(BenchEnv):
    """`bench/Agent-v0`: the policy is the agent; the other side is `user=` (default: bench's scripted user).

    Keyword arguments: `domain`, `data_dir`, `tasks_file`, `split`, `task_id` (one or a list), `mode` (`default`,
    `no-user`, `oracle-plan`), `user`, `user_options`, `judge`, `models` ({role: {model, base_url, ...}}), `plugins`,
    `db` (store episodes there), `run_id`, `seed` (the run's), `max_steps`, `max_errors`, `timeout_s`, `profile`,
    `cache`, `max_cost`, `baseline`, `policy_name`, `shaping`.
    """

    side: ClassVar[Side] = "agent"


class UserEnv(BenchEnv):
    """`bench/User-v0`: the policy is the customer; the other side is `agent=` (default: bench's oracle agent).

    The same keyword arguments as AgentEnv, with `agent` and `agent_options` for the other side; no `no-user` mode.
    """

    side: ClassVar[Side] = "user"


def draw_task(task_ids: list[str], rng: Any) -> str:
    """The episode's task: the only one, or one drawn with the environment's generator."""
    return task_ids[0] if len(task_ids) == 1 else task_ids[int(rng.integers(len(task_ids)))]


def update_action_space(space: ChatAction, outcome: Outcome) -> None:
    """The episode's tools, and on the user side the stop token, for random actions."""
    space.tools = list(outcome.observation.get("tools") or [])
    tokens = outcome.info.get("stop_tokens")
    space.stop = tokens[0] if tokens else None
