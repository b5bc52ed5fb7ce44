"""Gold replays as checks: two from fresh states, the first watched, find tools that edit shared records or are not deterministic."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from bench_kernel.evaluation.evaluator import Replayed, gold_assertion_checks, replay_gold_actions
from bench_kernel.schema.messages import ToolMessage
from bench_kernel.schema.tasks import Action, Task
from bench_kernel.serialization import canonical_json, converter
from bench_kernel.tasks.domain import DomainData, build_environment
from bench_kernel.tools.environment import Environment
from bench_kernel.tools.state import BaseTable, RecordWatch

IN_PLACE = "edits a shared record in place"
IN_PLACE_FIX = (
    "Fix: change a private copy (`record = TABLE.edit(key)`) or assign a new record (`TABLE[key] = ...`); never change what `table[key]` returns"
)
NOT_DETERMINISTIC = "is not deterministic"
DETERMINISM_FIX = (
    "Fix: derive new ids and values from the state (e.g. a counter over the table's keys, or a hash of "
    "the arguments), never from uuid4, random or the clock"
)
SHOWN = 48
"""Characters of each differing result or record a message shows."""


@attrs.frozen(kw_only=True)
class ToolFault:
    """A tool that leaves a domain unscorable whatever the agent does, found on one task's gold replay."""

    task_id: str
    step: str
    """Where it showed: "gold action 2", "the set-up", "the env assertions"."""
    tool: str | None
    """The tool, with its toolkit and module (None: the set-up or an assertion, not one tool call)."""
    problem: str
    """IN_PLACE or NOT_DETERMINISTIC."""
    detail: str
    table: str = "table"
    """The table of the record edited in place (the fix names it)."""

    @classmethod
    def at(cls, task: Task, step: Step, problem: str, detail: str, table: str = "table") -> ToolFault:
        """The fault found at this step of the task's gold replay."""
        return cls(task_id=task.id, step=step[0], tool=step[1], problem=problem, detail=detail, table=table)

    def describe(self) -> str:
        """One sentence naming the tool, the task and what differed, then the fix."""
        who = f"tool {self.tool}" if self.tool else f"{self.step} of task {self.task_id!r}"
        fix = in_place_fix(self.table) if self.problem == IN_PLACE else DETERMINISM_FIX
        where = f"task {self.task_id!r}, {self.step}: " if self.tool else ""
        return f"{who} {self.problem}: {where}{self.detail}. {fix}"


@attrs.frozen(kw_only=True)
class GoldCheck(Replayed):
    """A task's gold replay as a check: failing gold actions, env assertion checks and whether it is deterministic."""

    fault: ToolFault | None = None
    """A tool that is not deterministic (in-place edits are found after every task: `GoldChecker.faults`)."""


Step = tuple[str, str | None]
"""Where a replay is: ("gold action 2", the tool's label) or ("the set-up", None)."""


@attrs.define
class GoldChecker:
    """Replays each task's gold actions twice from fresh states in lockstep, the first replay's shared records watched."""

    data: DomainData
    watch: RecordWatch = attrs.field(factory=RecordWatch)
    watched: DomainData = attrs.field(init=False)
    checked: list[Task] = attrs.field(factory=list)
    nondeterministic: list[ToolFault] = attrs.field(factory=list)
    _pinned: list[ToolFault] | None = None

    def __attrs_post_init__(self) -> None:
        user = self.data.user_state.watched(self.watch) if self.data.user_state is not None else None
        self.watched = attrs.evolve(self.data, agent_state=self.data.agent_state.watched(self.watch), user_state=user)

    def check(self, task: Task, *, twice: bool = True) -> GoldCheck:
        """The task's gold check; `twice=False` replays once (finding in-place edits, not nondeterminism)."""
        self.checked.append(task)
        env = build_environment(self.watched, task)
        twins = [build_environment(self.data, task)] if twice else []
        errors = replay_gold_actions(task, env, *twins, sync=self.data.sync_gold_actions)
        checks = gold_assertion_checks(self.watched, task, env)
        # Final states are compared by their changes alone (no database hashed whole); step by step only when they differ.
        differs = state_difference(env, twins[0]) if twins else None
        fault = None
        if differs is not None:  # rare: replayed again, step by step, to name the step
            fault = self._first_divergence(task) or _not_deterministic(task, ("the gold replays", None), differs)
            self.nondeterministic.append(fault)
        return GoldCheck(action_errors=errors, assertion_checks=checks, fault=fault, env=twins[0] if twins else env)

    def faults(self) -> list[ToolFault]:
        """After the checks: each tool that edited a shared record in place, then each one not deterministic elsewhere."""
        if self._pinned is None:  # the watched records were digested when first read: replay only when one moved
            changed = self.watch.changed()
            self._pinned = self._pin_in_place(changed) if changed else []
        spoilt = {fault.task_id for fault in self._pinned}
        return self._pinned + [fault for fault in self.nondeterministic if fault.task_id not in spoilt]

    def _pin_in_place(self, changed: list[tuple[BaseTable, str]]) -> list[ToolFault]:
        """Put the records back and replay the tasks checked, looking at them after each step."""
        for base, key in changed:
            self.watch.restore(base, key)
        faults = []
        for task in self.checked:
            try:
                fault = self._replay_looking(task, changed)
            except Exception:  # noqa: BLE001 - a set-up that raises is reported as such elsewhere
                continue
            if fault is not None:
                faults.append(fault)
        if faults:
            return faults
        task_id, table = self.checked[0].id if self.checked else "?", self.watch.names[changed[0][0]]
        detail = f"changed {self._listed(changed)} (no single call does it again)"
        return [ToolFault(task_id=task_id, step="the gold replays", tool=None, problem=IN_PLACE, table=table, detail=detail)]

    def _replay_looking(self, task: Task, records: list[tuple[BaseTable, str]]) -> ToolFault | None:
        env = build_environment(self.data, task)
        for step, _ in self._steps(task, [env]):
            fault = self._edited(task, step, records)
            if fault is not None:
                return fault
        gold_assertion_checks(self.data, task, env)
        return self._edited(task, ("the env assertions", None), records)

    def _edited(self, task: Task, step: Step, records: list[tuple[BaseTable, str]]) -> ToolFault | None:
        edited = [(base, key) for base, key in records if not self.watch.is_pristine(base, key)]
        for base, key in edited:
            self.watch.restore(base, key)
        if not edited:
            return None
        detail = f"changed {self._listed(edited)}, which every conversation of a run shares"
        return ToolFault.at(task, step, IN_PLACE, detail, self.watch.names[edited[0][0]])

    def _listed(self, records: list[tuple[BaseTable, str]]) -> str:
        return ", ".join(f"record {key!r} of table {self.watch.names[base]!r}" for base, key in records)

    def _first_divergence(self, task: Task) -> ToolFault | None:
        """The first step where two more replays in lockstep differ in a result or the state (None if they agree)."""
        envs = [build_environment(self.data, task), build_environment(self.data, task)]
        for step, results in self._steps(task, envs):
            if results and results[0].content != results[1].content:
                a, b = abbreviated_pair(results[0].content or "", results[1].content or "")
                return ToolFault.at(task, step, NOT_DETERMINISTIC, f"returned {a!r} in one gold replay from a fresh state and {b!r} in another")
            differs = state_difference(*envs)
            if differs is not None:
                return _not_deterministic(task, step, differs)
        return None

    def _steps(self, task: Task, envs: list[Environment]) -> Iterator[tuple[Step, list[ToolMessage]]]:
        """The set-up, then each gold action run on every env in lockstep, with its results (each step once looked at)."""
        yield ("the set-up", None), []
        for action in task.gold_actions():
            results = [env.execute(action.as_tool_call(), sync=self.data.sync_gold_actions) for env in envs]
            yield (f"gold action {action.action_id}", tool_label(envs[0], action)), results


def _not_deterministic(task: Task, step: Step, differs: tuple[str, str, Any, Any]) -> ToolFault:
    """Two replays left one record different (every result equal so far)."""
    table, key, a, b = differs
    plain = [canonical_json(converter.unstructure(r)) if r is not None else "" for r in (a, b)]
    texts = abbreviated_pair(plain[0], plain[1])
    one, other = (repr(text) if record is not None else "absent" for text, record in zip(texts, (a, b), strict=True))
    detail = f"left record {key!r} of table {table!r} as {one} in one gold replay from a fresh state and as {other} in another (every result equal)"
    return ToolFault.at(task, step, NOT_DETERMINISTIC, detail)


def in_place_fix(table: str) -> str:
    """The fix of an in-place edit, naming the table as a tool reaches it."""
    return IN_PLACE_FIX.replace("TABLE", f"self.state.{table}" if table.isidentifier() else f"self.state[{table!r}]")


def state_difference(env: Environment, twin: Environment) -> tuple[str, str, Any, Any] | None:
    """The first record where two environments of one task differ (agent state, then a user state of its own)."""
    differs = env.agent_tools.state.first_difference(twin.agent_tools.state)
    user, other = env.user_tools, twin.user_tools
    if differs is None and user is not None and other is not None and user.state is not env.agent_tools.state:
        differs = user.state.first_difference(other.state)
    return differs


def tool_label(env: Environment, action: Action) -> str:
    """A gold action's tool as a message names it: 'name' (Toolkit in module)."""
    try:
        toolkit = type(env.toolkit_for(action.requestor, action.name))
    except Exception:  # noqa: BLE001 - no toolkit takes it: the name alone
        return repr(action.name)
    return f"{action.name!r} ({toolkit.__name__} in {toolkit.__module__})"


def abbreviated_pair(a: str, b: str, width: int = SHOWN) -> tuple[str, str]:
    """Both texts cut to `width` characters from a little before where they first differ ("…" marks a cut)."""
    if max(len(a), len(b)) <= width:
        return a, b
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    near = max(0, start - width // 2)
    comma = a.rfind(", ", near, start)
    field = max(comma + 2 if comma >= 0 else -1, a.rfind("{", near, start), a.rfind("[", near, start))
    begin = field if field >= 0 else max(0, start - width // 4)

    def cut(text: str) -> str:
        return ("…" if begin else "") + text[begin : begin + width] + ("…" if len(text) > begin + width else "")

    return cut(a), cut(b)
