"""The services domain: what `bench` loads when a run names it."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

import attrs
from bench_atod import task_goals

from bench_kernel import Domain, DomainData, DomainOptions, EnvFunctionCall, InitialState, State, Task, read_json, read_tasks

from .plan import SHIFT_PLAN, shift_view
from .tools import ServicesTools
from .tracking import advance


@attrs.define(kw_only=True)
class ServicesDomain(Domain):
    """A multi-service assistant (travel, dining, events, rides, banking, weather, reminders) with asynchronous bookings."""

    name: str = "services"
    description: str = "Multi-service assistant (SGD-shaped): search, book (asynchronous), status and pay; multi-goal tasks."

    def load(self, options: DomainOptions) -> DomainData:
        """Read the packaged data (or options.data_dir), then the tasks of options.tasks_file and options.split."""
        with as_file(files(__package__).joinpath("data")) as packaged:
            data_dir = Path(options.data_dir or packaged)
            return DomainData(
                name=self.name,
                tasks=[prepared(t) for t in read_tasks(data_dir / "tasks.json", options)],
                policy=(data_dir / "policy.md").read_text(encoding="utf-8"),
                agent_toolkit=ServicesTools,
                agent_state=State.from_records(read_json(data_dir / "db.json")),
                advance=advance,
                scripted_user="planned",
                source=str(data_dir),
            )


def prepared(task: Task) -> Task:
    """A task whose goals the domain tracks (an initialization action) and whose plan the oracle follows."""
    goals = task_goals(task)
    if not goals:
        return task
    tracked = [{"id": g.id, "intent": g.intent, "slot_values": dict(g.slot_values)} for g in goals]
    call = EnvFunctionCall(env_type="assistant", func_name="track_goals", arguments={"goals": tracked})
    state = task.initial_state or InitialState()
    state = attrs.evolve(state, initialization_actions=[call, *(state.initialization_actions or [])])
    extensions = dict(task.extensions)
    plan = extensions.get("services_plan")
    if plan is not None and SHIFT_PLAN not in extensions:
        extensions[SHIFT_PLAN] = shift_view(plan)
    return attrs.evolve(task, initial_state=state, extensions=extensions)
