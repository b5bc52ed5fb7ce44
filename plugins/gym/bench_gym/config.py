"""What an environment is built from: its keyword arguments, checked, and the bench run they make."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from bench_kernel import ConfigError, Message, Mode, ModelConfig, RunConfig, installed_entry_points, structure

Side = Literal["agent", "user"]
SIDES: tuple[Side, ...] = ("agent", "user")
POLICY = "gym-policy"
"""The name the policy's side has in a run (its agent or user), unless `policy_name` says otherwise."""
OTHER: dict[Side, Side] = {"agent": "user", "user": "agent"}
OTHER_SIDE_DEFAULT = {"agent": "scripted", "user": "oracle"}
"""Who plays the other side unless told: the scripted user opposite a policy agent, the oracle opposite a policy user."""

Shaping = Callable[[Sequence[Message], Mapping[str, Any]], float]
"""Per-step reward shaping: (the step's new conversation messages, the step's info) -> a reward added to the step's."""


@attrs.frozen(kw_only=True)
class GymConfig:
    """An environment's settings: which conversations it plays, who is on the other side, where episodes are stored."""

    domain: str
    side: Side = "agent"
    data_dir: str | None = None
    tasks_file: str | None = None
    split: str | None = None
    retrieval: str | None = None
    """The knowledge-retrieval variant, for domains whose agent searches documents (as `bench run --retrieval`)."""
    retrieval_options: Mapping[str, Any] | None = None
    task_ids: tuple[str, ...] | None = None
    """The tasks episodes are drawn from (all of the domain's when None)."""
    mode: Mode = Mode.DEFAULT
    other: str | None = None
    """The other side's participant (a registered user simulator or agent); OTHER_SIDE_DEFAULT when None."""
    other_options: Mapping[str, Any] = attrs.field(factory=dict)
    judge: str | None = None
    models: Mapping[str, ModelConfig] = attrs.field(factory=dict)
    plugins: tuple[str, ...] = ()
    """Plugins to load besides the domain's (a model backend named by `models` loads its own)."""
    db: str | None = None
    """The results database episodes are stored in (None: played and scored, not stored)."""
    run_id: str | None = None
    seed: int = 300
    """The run's seed: each episode's conversation seed derives from it, the task and the trial (bench's rule)."""
    max_steps: int = 200
    max_errors: int = 10
    timeout_s: float | None = None
    profile: str | None = None
    cache: bool = False
    max_cost: float | None = None
    baseline: bool = False
    """Also play bench's do-nothing baseline once per task (stored with the run, shown by its report)."""
    policy_name: str = POLICY
    person: bool = False
    """A person plays the policy (`bench play`): its cost is 0, where a model policy's is unknown to bench."""
    shaping: Shaping | None = None

    def __attrs_post_init__(self) -> None:
        if self.side not in SIDES:
            raise ConfigError(f"side must be 'agent' or 'user', not {self.side!r}")
        if self.side == "user" and self.mode is Mode.NO_USER:
            raise ConfigError(
                "the user side has no conversation to play in the no-user mode (the agent works alone): "
                "use the agent environment, bench/Agent-v0, for mode='no-user'"
            )

    @property
    def other_side(self) -> str:
        """The name of the participant on the other side."""
        return self.other or OTHER_SIDE_DEFAULT[self.side]

    def selected_plugins(self) -> list[str]:
        """The plugins to load: the domain's (an installed plugin named like the domain), the named ones, the models'."""
        available = installed_entry_points()
        wanted = [p for p in self.plugins if p != "gym"]  # this plugin's environment parts are registered in-process
        if self.domain in available and self.domain not in wanted:
            wanted.insert(0, self.domain)
        if not wanted:
            raise ConfigError(
                f"no installed plugin is named like domain {self.domain!r}: name the plugin that provides it with plugins=[...] (see `bench plugins`)"
            )
        backends = [m.backend for m in self.models.values()]
        return [*wanted, *(b for b in dict.fromkeys(backends) if b in available and b not in wanted)]

    def run_config(self, slots: int) -> RunConfig:
        """The bench run an environment (or a vector of `slots` of them) plays its episodes in."""
        agent, user = (self.policy_name, self.other_side) if self.side == "agent" else (self.other_side, self.policy_name)
        options = dict(self.other_options)
        return RunConfig(
            domain=self.domain,
            agent=agent,
            user=user,
            judge=self.judge,
            mode=self.mode,
            trials=1,
            task_ids=list(self.task_ids) if self.task_ids else None,
            split=self.split,
            retrieval=self.retrieval,
            retrieval_options=dict(self.retrieval_options) if self.retrieval_options is not None else None,
            seed=self.seed,
            max_steps=self.max_steps,
            max_errors=self.max_errors,
            conversation_timeout_s=self.timeout_s,
            baseline=self.baseline,
            data_dir=_absolute(self.data_dir),
            tasks_file=_absolute(self.tasks_file),
            plugins=self.selected_plugins(),
            agent_options=options if self.side == "user" else {},
            user_options=options if self.side == "agent" else {},
            models=dict(self.models),
            profile=self.profile,
            run_id=self.run_id,
            concurrency=max(1, slots),
            cache=self.cache,
            max_cost=self.max_cost,
            executor="gym",
        )


def _absolute(path: str | None) -> str | None:
    return None if path is None else str(Path(path).expanduser().resolve())


def gym_config(
    domain: str,
    *,
    side: Side = "agent",
    task_id: str | Sequence[str] | None = None,
    mode: str | Mode = "default",
    models: Mapping[str, ModelConfig | Mapping[str, Any]] | None = None,
    plugins: Sequence[str] = (),
    data_dir: str | Path | None = None,
    tasks_file: str | Path | None = None,
    db: str | Path | None = None,
    **settings: Any,
) -> GymConfig:
    """A GymConfig from an environment's keyword arguments.

    The other side is named as it is in `bench run`: `user=` (and `user_options=`) opposite a policy agent, `agent=`
    (and `agent_options=`) opposite a policy user. A task id or several; models as ModelConfigs or plain mappings.
    """
    other = OTHER[side]
    settings["other"] = settings.pop(other, None)
    settings["other_options"] = settings.pop(f"{other}_options", None) or {}
    hidden = {"other", "other_options", "task_ids", "side"}
    fields = {f.name for f in attrs.fields(GymConfig)} - {"domain"}
    unknown = sorted(set(settings) - fields)
    if unknown:
        known = sorted({other, f"{other}_options", "task_id", "mode", "models", "plugins", "data_dir", "tasks_file", "db", *(fields - hidden)})
        raise ConfigError(f"unknown environment argument {unknown[0]!r} (known: {', '.join(known)})")
    task_ids = (task_id,) if isinstance(task_id, str) else tuple(task_id) if task_id is not None else None
    try:
        mode = Mode(mode)
    except ValueError:
        raise ConfigError(f"mode must be one of {', '.join(m.value for m in Mode)}, not {mode!r}") from None
    return GymConfig(
        domain=domain,
        side=side,
        task_ids=task_ids,
        mode=mode,
        models=_model_configs(models or {}),
        plugins=tuple(plugins),
        data_dir=_text(data_dir),
        tasks_file=_text(tasks_file),
        db=_text(db),
        **settings,
    )


def _text(path: str | Path | None) -> str | None:
    return None if path is None else str(path)


def _model_configs(models: Mapping[str, ModelConfig | Mapping[str, Any]]) -> dict[str, ModelConfig]:
    return {role: m if isinstance(m, ModelConfig) else structure(dict(m), ModelConfig, source=f"models[{role!r}]") for role, m in models.items()}
