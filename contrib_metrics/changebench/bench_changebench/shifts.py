"""Shift plans: goal shifts injected into any domain's tasks by chaining the domain's own tasks (a task transform).

`--shifts N` makes every selected task the first goal of a chain of N+1 goals, the next ones taken
from the domain's following tasks (cyclically; goals the user words differently first); a candidate
whose combined gold replay fails (goals that contradict each other) is skipped for the next one, and
a task with no sound partner among the next 20 runs unshifted (a warning names it). `--shift-plan FILE` names the chains
instead: a JSON list of {"task": id, "then": [id, ...]}. A chained task keeps the first task's
scenario and adds each later goal's instructions, its set-up, gold actions, assertions and facts to
communicate; its plan (`task.extensions["shift_plan"]`) says which actions belong to which goal, so
the kernel's scripted user can move on goal by goal (emitting a `GoalShift` event at the turn it does)
and its oracle agent can work goal by goal. A loaded metric with `default_shifts = N` (bench-gsrt) makes
a run without either setting chain N shifts, unless its tasks carry their own `goal_shifts`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    Action,
    ConfigError,
    DomainData,
    EvaluationCriteria,
    GoldChecker,
    InitialState,
    Registry,
    StructuredUserInstructions,
    Task,
    TaskFileError,
    TaskTransform,
    get_logger,
    read_json,
    refuse_tool_faults,
)

from .settings import run_setting

PLAN = "shift_plan"
log = get_logger()
MAX_CANDIDATES = 20
"""How many following tasks are tried for one goal slot before the chain is declared impossible."""


@attrs.frozen(kw_only=True)
class PlannedGoal:
    """One goal of a chain: the task it comes from, what the user says to raise it, its gold action ids."""

    task_id: str
    opening: str
    action_ids: list[str] = attrs.field(factory=list)


@attrs.frozen(kw_only=True)
class ShiftPlan:
    """The goals of a chained task, in order, and when the scripted user gives up on one and moves on."""

    goals: list[PlannedGoal]
    turns_per_goal: int | None = None

    def goal_of(self, action_id: str) -> int:
        """The index of the goal an action belongs to (0 when no goal claims it)."""
        return next((i for i, g in enumerate(self.goals) if action_id in g.action_ids), 0)


def opening(task: Task) -> str:
    """What a user says to raise a task's goal: its reason for calling and what it knows."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return instructions
    return " ".join(p.strip() for p in (instructions.reason_for_call, instructions.known_info or "") if p and p.strip())


def chain(tasks: Sequence[Task], *, turns_per_goal: int | None = None) -> Task:
    """One task whose goals are these tasks' goals, in order."""
    first = tasks[0]
    goals, actions = [], []
    for g, task in enumerate(tasks):
        ids = []
        for a in task.gold_actions():
            renamed = a.action_id if g == 0 else f"goal{g}:{a.action_id}"
            ids.append(renamed)
            actions.append(attrs.evolve(a, action_id=renamed))
        goals.append(PlannedGoal(task_id=task.id, opening=opening(task), action_ids=ids))
    plan = ShiftPlan(goals=goals, turns_per_goal=turns_per_goal)
    return attrs.evolve(
        first,
        id="+".join(t.id for t in tasks),
        user_scenario=attrs.evolve(first.user_scenario, instructions=_instructions(tasks)),
        initial_state=_initial_state(tasks),
        evaluation_criteria=_criteria(tasks, actions),
        extensions={**first.extensions, PLAN: plan},
        attributes={**first.attributes, "shifts": str(len(tasks) - 1)},
    )


def _instructions(tasks: Sequence[Task]) -> StructuredUserInstructions | str:
    plan = "\n".join(f"{i + 1}. {opening(t)}" for i, t in enumerate(tasks))
    note = f"\n\nYour goals, in this order (move to the next one once the current one is handled; never say that you are following a list):\n{plan}"
    instructions = tasks[0].user_scenario.instructions
    if isinstance(instructions, str):
        return instructions + note
    return attrs.evolve(instructions, task_instructions=instructions.task_instructions + note)


def _initial_state(tasks: Sequence[Task]) -> InitialState | None:
    states = [t.initial_state for t in tasks if t.initial_state is not None]
    if not states:
        return None
    if any(s.initialization_data is not None or s.message_history for s in states[1:]):
        raise ValueError("only the first goal of a chain may carry initialization data or a message history")
    calls = [c for s in states for c in s.initialization_actions or []]
    return attrs.evolve(states[0], initialization_actions=calls or None)


def _criteria(tasks: Sequence[Task], actions: list[Action]) -> EvaluationCriteria | None:
    every = [t.evaluation_criteria for t in tasks if t.evaluation_criteria is not None]
    if not every:
        return None

    def joined(field: str) -> list | None:
        items = [x for c in every for x in getattr(c, field) or []]
        return items or None

    basis = list(dict.fromkeys(b for c in every for b in c.reward_basis))
    return attrs.evolve(
        every[0],
        actions=actions or None,
        env_assertions=joined("env_assertions"),
        communicate_info=joined("communicate_info"),
        nl_assertions=joined("nl_assertions"),
        reward_basis=basis,
    )


def read_plan_file(path: Path) -> list[tuple[str, list[str]]]:
    """Chains named in a plan file: [{"task": id, "then": [id, ...]}, ...]."""
    data = read_json(path)
    problems = [] if isinstance(data, list) else ["expected a list of {task, then} objects @ $"]
    chains = []
    for i, item in enumerate(data if isinstance(data, list) else []):
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("task"), str)
            or not isinstance(item.get("then"), list)
            or not all(isinstance(t, str) for t in item["then"])
        ):
            problems.append(f'expected {{"task": id, "then": [id, ...]}} @ $[{i}]')
            continue
        chains.append((item["task"], list(item["then"])))
    if problems:
        raise TaskFileError(str(path), problems)
    return chains


def plan_chains(
    selected: Sequence[Task], every: Sequence[Task], shifts: int, sound: Callable[[Task], bool], turns_per_goal: int | None = None
) -> list[Task]:
    """Each selected task chained with the next `shifts` tasks of `every` for which `sound(chained)` holds."""
    order = [t.id for t in every]
    by_id = {t.id: t for t in every}
    out = []
    for task in selected:
        start = order.index(task.id) if task.id in by_id else -1
        goals = [task]
        for distinct in (True, False):  # prefer goals the user words differently: a shift the agent can notice
            for offset in range(1, MAX_CANDIDATES * shifts + 1):
                candidate = every[(start + offset) % len(every)]
                if len(goals) > shifts or candidate.id == task.id or candidate in goals:
                    continue
                if distinct and opening(candidate) in {opening(g) for g in goals}:
                    continue
                try:
                    chained = chain([*goals, candidate])
                except ValueError:  # a later goal that needs its own history or data patch cannot join a chain
                    continue
                if sound(chained):
                    goals.append(candidate)
        if len(goals) <= shifts:
            # e.g. a task only a human can fix: its failure checks contradict any fixable goal. It runs unshifted.
            log.warning(
                "shifts.unchained", task_id=task.id, shifts=shifts, why=f"no following task within {MAX_CANDIDATES * shifts} chains with it soundly"
            )
            out.append(task)
            continue
        out.append(chain(goals, turns_per_goal=turns_per_goal))
    return out


def named_chains(
    chains: Sequence[tuple[str, Sequence[str]]], every: Sequence[Task], sound: Callable[[Task], bool], turns_per_goal: int | None = None
) -> list[Task]:
    """The chains a plan file names; an unknown id or a chain whose gold replay fails is an error naming it."""
    by_id = {t.id: t for t in every}
    out = []
    for first, then in chains:
        missing = [i for i in (first, *then) if i not in by_id]
        if missing:
            raise ConfigError(f"shift plan names unknown task ids: {', '.join(missing)}")
        try:
            chained = chain([by_id[first], *(by_id[i] for i in then)], turns_per_goal=turns_per_goal)
        except ValueError as exc:
            raise ConfigError(f"shift plan chain starting at {first!r}: {exc}") from None
        if not sound(chained):
            raise ConfigError(f"shift plan chain {chained.id!r}: its goals' gold replays conflict")
        out.append(chained)
    return out


@attrs.define(kw_only=True)
class ShiftTransform(TaskTransform):
    """`shifts`, `shift_plan` and `turns_per_goal`: the selected tasks chained into goal-shift tasks."""

    name: str = "goal-shifts"
    settings: tuple[str, ...] = ("shifts", "shift_plan", "turns_per_goal")
    description: str = "Goal shifts on any domain: each task chained with following ones (--shifts) or as a plan names (--shift-plan)."

    def tasks(self, data: DomainData, tasks: list[Task], settings: Mapping[str, Any], registry: Registry) -> list[Task]:
        """The tasks chained when the run asks for shifts, or when a loaded metric measures them (`default_shifts`)."""
        plan_file = run_setting(settings, "shift_plan", str)
        shifts = run_setting(settings, "shifts", int) or (None if plan_file else default_shifts(registry, tasks))
        turns = run_setting(settings, "turns_per_goal", int)
        if not shifts and not plan_file:
            return tasks
        checker = GoldChecker(data)  # watched from the first replay: a record edited in place is found, not inherited

        def sound(task: Task) -> bool:
            try:
                gold = checker.check(task, twice=False)  # the chains run are checked twice by the run's gold step
            except Exception:  # noqa: BLE001 - set-ups that contradict each other (two suspensions of one line)
                return False
            return not gold.action_errors and all(c.met for c in gold.assertion_checks)

        if plan_file:
            chained = named_chains(read_plan_file(Path(plan_file)), data.tasks, sound, turns)
        else:
            chained = plan_chains(tasks, data.tasks, shifts or 0, sound, turns)
        refuse_tool_faults(data, checker.faults(), registry.origins.get(("domain", data.name)))
        return chained


def default_shifts(registry: Registry, tasks: Sequence[Task]) -> int | None:
    """The most shifts a loaded metric asks for (`default_shifts`), unless the tasks carry their own goal shifts."""
    if any("goal_shifts" in t.extensions for t in tasks):
        return None  # tasks that carry their own goal shifts (AgentChangeBench's) are run as they are
    wanted = [getattr(m, "default_shifts", None) for m in registry.components.get("metric", {}).values()]
    found = max((w for w in wanted if isinstance(w, int) and w > 0), default=None)
    if found:
        log.info("run.shifts", shifts=found, why="a loaded metric measures goal shifts; --shifts or --shift-plan to choose")
    return found
