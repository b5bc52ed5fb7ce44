"""Compositional tasks: a domain declares atomic subtasks; this module composes, builds, names and verifies tasks.

An atomic subtask is one fault: the initialization steps that cause it, the solution steps that
fix it (`None` when only a human can) and, optionally, extra assertions. Subtasks sit in selection
sets (mutually exclusive faults); a composition picks none or one subtask per set. As in
tau2-bench's telecom generator, the chosen subtasks are ordered by name, their steps are
concatenated in that order, the id is `[intent]name1|name2[PERSONA:p]`, and personas cycle over the
compositions after a stable sort by their number of subtasks. Steps may be fixed calls or
functions of the environment at generation time (e.g. the id of the bill an earlier step created).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from bench_kernel import Action, DomainData, EnvAssertion, EnvFunctionCall, Environment, Task, ToolCall, build_environment, structure, unstructure

InitStep = EnvFunctionCall | EnvAssertion | Callable[[Environment], Sequence[EnvFunctionCall | EnvAssertion]]
SolutionStep = ToolCall | Callable[[Environment], Sequence[ToolCall]]
AssertionStep = EnvAssertion | Callable[[Environment], Sequence[EnvAssertion]]
UNFIXABLE = Action(
    action_id="transfer_to_human_agents",
    name="transfer_to_human_agents",
    requestor="assistant",
    arguments={"summary": "I cannot fix the issue."},
    compare_args=[],
)


@attrs.frozen(kw_only=True)
class Subtask:
    """One atomic fault: how to cause it, how to fix it (None: it cannot be fixed), and extra checks."""

    name: str
    description: str = ""
    init: Sequence[InitStep] = ()
    solution: Sequence[SolutionStep] | None = ()
    assertions: Sequence[AssertionStep] = ()

    @property
    def fixable(self) -> bool:
        """False when the fault needs a human."""
        return self.solution is not None


@attrs.frozen
class Composition:
    """Subtasks chosen together, ordered by name."""

    subtasks: tuple[Subtask, ...]

    @property
    def name(self) -> str:
        """The subtask names joined by '|'."""
        return "|".join(s.name for s in self.subtasks)

    @property
    def fixable(self) -> bool:
        """True when every subtask can be fixed."""
        return all(s.fixable for s in self.subtasks)


Choice = tuple[Subtask | None, ...]


def compose(selection_sets: Sequence[Sequence[Subtask]], valid: Callable[[Choice], bool] | None = None) -> list[Composition]:
    """Every choice of none or one subtask per set, in product order; `valid` sees the raw choice (Nones included).

    Without `valid`, the empty choice is dropped; with it, `valid` decides.
    """
    found = []
    for choice in itertools.product(*[[*options, None] for options in selection_sets]):
        if valid is not None and not valid(choice):
            continue
        chosen = tuple(sorted((s for s in choice if s is not None), key=lambda s: s.name))
        if valid is None and not chosen:
            continue
        found.append(Composition(chosen))
    return found


def with_personas(compositions: Sequence[Composition], personas: Sequence[str]) -> list[tuple[Composition, str]]:
    """Compositions ordered by their number of subtasks (stable), each with the persona its position cycles to."""
    ordered = sorted(compositions, key=lambda c: len(c.subtasks))
    return [(c, personas[i % len(personas)]) for i, c in enumerate(ordered)]


def composed_id(intent: str, composition: Composition, persona: str) -> str:
    """`[intent]name1|name2[PERSONA:persona]`."""
    return f"[{intent}]{composition.name}[PERSONA:{persona}]"


@attrs.define(kw_only=True)
class Composer:
    """Builds and verifies the tasks of one intent from its selection sets."""

    intent: str
    selection_sets: Sequence[Sequence[Subtask]]
    assertions: Callable[[bool], list[EnvAssertion]]
    """The intent's assertions for a fixable (True) or an unfixable (False) task."""
    template: Callable[[Composition, str, Environment], dict[str, Any]]
    """The rest of the task JSON (description, user_scenario, ticket), given the set-up environment."""
    setup: Sequence[EnvFunctionCall] = ()
    """Initialization steps every task of the intent starts with (e.g. who the user is)."""
    valid: Callable[[Choice], bool] | None = None
    personas: Sequence[str] = ("None",)
    reward_basis: Sequence[str] = ("ENV_ASSERTION",)
    """For fixable tasks; an unfixable task adds ACTION, its gold action being the transfer to a human."""

    def compositions(self) -> list[tuple[Composition, str]]:
        """Every valid composition with its persona."""
        return with_personas(compose(self.selection_sets, self.valid), self.personas)

    def build(self, data: DomainData, composition: Composition, persona: str) -> Task:
        """The task of one composition: initialization actions computed on a fresh environment, gold actions, assertions."""
        env = build_environment(data, None)
        init = [*self.setup]
        for call in self.setup:
            env.run_function(call)
        for step in (s for sub in composition.subtasks for s in sub.init):
            init += _run_init_step(env, step)
        fixable = composition.fixable
        actions = _gold_actions(env, composition) if fixable else [UNFIXABLE]
        checks = list(self.assertions(fixable))
        if fixable:
            checks += [a for sub in composition.subtasks for step in sub.assertions for a in _assertions(env, step)]
        basis = [*self.reward_basis, *([] if fixable else ["ACTION"])]
        raw = {
            **self.template(composition, persona, env),
            "id": composed_id(self.intent, composition, persona),
            "initial_state": {"initialization_actions": [unstructure(c) for c in init]},
            "evaluation_criteria": {
                "actions": [unstructure(a) for a in actions],
                "env_assertions": [unstructure(a) for a in checks],
                "reward_basis": basis,
            },
        }
        return structure(raw, Task, source=f"composer {self.intent}")

    def tasks(self, data: DomainData) -> list[Task]:
        """Every task of the intent, in composition order."""
        return [self.build(data, composition, persona) for composition, persona in self.compositions()]


def verify(data: DomainData, task: Task) -> list[str]:
    """A composed task is sound when its assertions fail after initialization and hold after the gold actions.

    For an unfixable task (its only gold action a transfer) the assertions describe the failure: they hold
    after initialization already.
    """
    criteria = task.evaluation_criteria
    assertions = list(criteria.env_assertions or []) if criteria else []
    env = build_environment(data, task)
    before = [env.check_assertion(a) for a in assertions]
    fixable = not any(a.name == UNFIXABLE.name for a in task.gold_actions())
    if not fixable:
        return [f"{task.id}: after initialization {c.subject} does not hold ({c.detail})" for c in before if not c.met]
    problems = [] if not all(c.met for c in before) else [f"{task.id}: every assertion holds before any fix"]
    for action in task.gold_actions():
        result = env.execute(action.as_tool_call())
        if result.error:
            problems.append(f"{task.id}: gold action {action.action_id} failed: {result.content}")
    problems += [
        f"{task.id}: after the gold actions {c.subject} fails ({c.detail})" for c in (env.check_assertion(a) for a in assertions) if not c.met
    ]
    return problems


def _run_init_step(env: Environment, step: InitStep) -> list[EnvFunctionCall]:
    """Run one initialization step now; assertions it returns must hold and are not kept in the task."""
    produced = step(env) if callable(step) else [step]
    kept = []
    for item in produced:
        if isinstance(item, EnvAssertion):
            check = env.check_assertion(item)
            if not check.met:
                raise ValueError(f"initialization assertion failed: {check.subject} ({check.detail})")
        else:
            env.run_function(item)
            kept.append(item)
    return kept


def _gold_actions(env: Environment, composition: Composition) -> list[Action]:
    calls = [c for sub in composition.subtasks for step in sub.solution or () for c in (step(env) if callable(step) else [step])]
    return [Action(action_id=f"{c.name}_{i}", name=c.name, requestor=c.requestor, arguments=dict(c.arguments)) for i, c in enumerate(calls)]


def _assertions(env: Environment, step: AssertionStep) -> list[EnvAssertion]:
    return list(step(env)) if callable(step) else [step]
