"""Does loaded data fit its domain? Checked at load: another domain's tasks name functions the toolkits lack (docstring misfits too)."""

from __future__ import annotations

import inspect

from bench_kernel.errors import ConfigError, PluginError
from bench_kernel.schema.tasks import EnvFunctionCall, Task
from bench_kernel.tasks.domain import DomainData, UserProfile
from bench_kernel.tools.environment import Toolkit

MAX_LISTED = 5


def check_toolkits(data: DomainData, plugin: str) -> None:
    """Build every tool schema now (they are lazy), naming the toolkit and tool that does not build."""
    for toolkit in (data.agent_toolkit, data.user_toolkit):
        if toolkit is None:
            continue
        try:
            toolkit.specs()
        except Exception as exc:
            raise PluginError(plugin, f"domain {data.name!r}, toolkit {toolkit.__name__}: {exc}") from exc


def check_fit(data: DomainData, where: str) -> None:
    """Refuse tasks whose actions, set-up or assertions name functions or arguments the domain lacks."""
    misfits = [m for task in data.tasks for m in _task_misfits(data, task)]
    if misfits:
        listed = "; ".join(misfits[:MAX_LISTED]) + (f"; and {len(misfits) - MAX_LISTED} more" if len(misfits) > MAX_LISTED else "")
        raise ConfigError(f"the tasks of {where} do not fit the {data.name} domain (is this another domain's data?): {listed}")


def _task_misfits(data: DomainData, task: Task) -> list[str]:
    found = []
    for action in task.gold_actions():
        toolkit = data.user_toolkit if action.requestor == "user" else data.agent_toolkit
        found += _call_misfit(toolkit, action.name, action.arguments, task.id, tool=True)
    setup = (task.initial_state.initialization_actions or []) if task.initial_state else []
    calls: list[EnvFunctionCall] = [*setup, *((task.evaluation_criteria.env_assertions or []) if task.evaluation_criteria else [])]
    for call in calls:
        toolkit = (data.user_toolkit or UserProfile) if call.env_type == "user" else data.agent_toolkit
        found += _call_misfit(toolkit, call.func_name, call.arguments, task.id, tool=False)
    return found


def _call_misfit(toolkit: type[Toolkit] | None, name: str, arguments: dict, task_id: str, *, tool: bool) -> list[str]:
    if toolkit is None:
        return [f"task {task_id!r} calls {name} on a side that has no toolkit"]
    func = getattr(toolkit, name, None)
    if (tool and name not in toolkit.specs()) or func is None or name.startswith("_") or not callable(func):
        return [f"task {task_id!r} names {name}, which {toolkit.__name__} does not have"]
    params = inspect.signature(func).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return []
    unknown = sorted(set(arguments) - set(params) - {"self"})
    return [f"task {task_id!r} calls {name} with arguments it does not take: {', '.join(unknown)}"] if unknown else []
