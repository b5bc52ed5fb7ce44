"""What every conversation of a run shares, the unit of a run, and the seam that plays units (the executor)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from bench_kernel.conversation.channels import Channel, IdentityChannel
from bench_kernel.conversation.participants import Agent, UserSimulator
from bench_kernel.errors import BenchError, ConfigError
from bench_kernel.evaluation.evaluator import GoldReplay, Replayed, default_evaluation, replay_gold
from bench_kernel.evaluation.metric import Judge, Metric
from bench_kernel.evaluation.rewards import Evaluation
from bench_kernel.modelhub.hub import ModelHub
from bench_kernel.profiles.profile import Profile, bench_profile
from bench_kernel.registry import Registry
from bench_kernel.run.config import RunConfig
from bench_kernel.schema.results import ConversationResult
from bench_kernel.schema.tasks import Task
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import DomainData
from bench_kernel.tasks.extensions import task_attributes


@attrs.define(kw_only=True)
class RunParts:
    """The run's configuration and every component it names, resolved before the store is touched (`resolve_components`)."""

    config: RunConfig
    agent: Agent
    user: UserSimulator | None
    baseline_agent: Agent
    baseline_user: UserSimulator | None
    judge: Judge | None
    metrics: list[tuple[str, Metric]]
    channel: Channel = attrs.field(factory=IdentityChannel)
    evaluation: Evaluation = attrs.field(factory=default_evaluation)


@attrs.define(kw_only=True)
class RunContext(RunParts):
    """What every conversation of a run shares."""

    run_id: str
    data: DomainData
    registry: Registry
    store: Store
    models: ModelHub
    golds: dict[str, GoldReplay] = attrs.field(factory=dict)
    attributes: dict[str, dict[str, str]] = attrs.field(factory=dict)
    executor: Executor | None = None
    """None plays in this process (what `local` does)."""
    profile: Profile = attrs.field(factory=bench_profile)
    store_path: str = ""
    plugins: list[str] | None = None
    """The run's plugins by entry-point name, for workers that rebuild the context (None: every installed one)."""
    later_gold_failures: list[dict[str, Any]] | None = None
    """Filled when the domain's deferred data is loaded (the gold replays need it): recorded then, not in `prepare`."""
    replays: dict[str, Replayed] = attrs.field(factory=dict)
    """The gold check's replays by task, each given up to the task's first score (`gold`), which then needs no replay."""
    tasks: list[Task] = attrs.field(factory=list)
    """The run's tasks as planned (a resume may score stored conversations of them again: `RewardComponent.resume`)."""
    refused: BenchError | None = None
    """The first `UnusableSessionError` a conversation met: nothing is stored after it and the run stops with it."""

    def task_attributes(self, task: Task) -> dict[str, str]:
        """The task's attributes for report breakdowns, computed once per run."""
        if task.id not in self.attributes:
            extensions = list(self.registry.components.get("task extension", {}).values())
            self.attributes[task.id] = task_attributes(self.data.name, task, extensions)
        return self.attributes[task.id]

    def gold(self, task: Task) -> GoldReplay:
        """The task's gold replay, computed once per run (it does not depend on the trial)."""
        if task.id not in self.golds:
            self.golds[task.id] = replay_gold(self.data, task, replayed=self.replays.pop(task.id, None))
        return self.golds[task.id]


@attrs.frozen
class Unit:
    """One conversation to run."""

    arm: str
    task: Task
    trial: int
    retry: int = 0
    """0 for the unit's first conversation; n for its n-th replay (`--retry-attributed`)."""


class ExecutorError(BenchError):
    """An executor could not play the run (a worker failed to start or died)."""


@attrs.define(kw_only=True)
class Executor:
    """Plays a run's units and sends each result to the run's single writer; subclasses implement `execute`."""

    name: str
    description: str = ""
    option_names: tuple[str, ...] = ()
    """The keys `--executor-option KEY=VALUE` (and `executor_options` in a run file) may set."""
    replaces: str = ""
    """The executor this one plays for while loaded (bench-workers' `workers` replaces `local`, the default)."""

    def check(self, config: RunConfig) -> None:
        """Refuse, before the run begins, a configuration this executor cannot play (raise ConfigError)."""
        unknown = sorted(set(config.executor_options) - set(self.option_names))
        if unknown:
            known = ", ".join(self.option_names) or "none"
            shown = f"{self.replaces!r} (played by {self.name!r})" if self.replaces else repr(self.name)
            raise ConfigError(f"executor {shown} has no option {unknown[0]!r} (its options: {known}) @ $.run.executor_options.{unknown[0]}")

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """Play the units, storing each finished conversation through `Writer(ctx, on_finished)`; return how many finished."""
        raise NotImplementedError

    def workers_line(self, config: RunConfig, units: int) -> str | None:
        """The run header's line saying where the units play (None: nothing to say)."""
        return None

    def plays_in_this_process(self, config: RunConfig) -> bool:
        """Whether the run's conversations play in the run's own process (its loaded domain data is theirs)."""
        return False

    def builds_data_after_starting(self, config: RunConfig) -> bool:
        """Whether the run may begin before its deferred data is built and checked (`execute` then calls `preload_run_data`)."""
        return self.plays_in_this_process(config)


def run_executor(registry: Registry, name: str) -> Executor:
    """The executor a run names, or the loaded one that replaces it (`Executor.replaces`)."""
    replacing: list[Executor] = [e for e in registry.components.get("executor", {}).values() if e.replaces == name]
    if len(replacing) > 1:
        names = ", ".join(f"{e.name} ({registry.origin('executor', e.name)})" for e in replacing)
        raise ConfigError(f"executors {names} each replace {name!r}: block all but one of their plugins (--plugin no:NAME)")
    return replacing[0] if replacing else registry.get("executor", name)
