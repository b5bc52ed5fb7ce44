"""Static audit flags: what a task's criteria, its gold actions and the domain's data say without playing anything."""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import attrs

from bench_kernel import DomainData, EvaluationCriteria, RewardType, Task, build_environment, cached_text, canonical_json, unstructure

STATIC_FLAGS = ("actions_unscored", "empty_criteria", "nl_outside_basis", "unknown_ids", "duplicate")
"""Flags read from the task and the data alone (cheap: a run records them for its report)."""
DYNAMIC_FLAGS = ("passed_by_floor", "gold_fails", "nondeterministic")
"""Flags that need conversations or gold replays (`bench audit` computes and caches them)."""
FLAGS = ("passed_by_floor", "actions_unscored", "empty_criteria", "unknown_ids", "nl_outside_basis", "gold_fails", "nondeterministic", "duplicate")
"""Every audit flag, in the order reports list them."""
AUDIT_VERSION = "1"
"""Bumped whenever a flag's meaning or a floor changes: cached audits of another version are not reused."""
ID_KEY = re.compile(r"(^|_)ids?$|[a-z]Ids?$")
"""Argument keys that hold ids: id, ids, user_id, item_ids, orderId."""
MAX_SHOWN = 3
DB_VALUES_VERSION = "1"
"""Bumped whenever what `db_values` collects changes: the values kept on disk by an older version are not read."""

_cache: dict[tuple[int, str], tuple[weakref.ref[Any], Any]] = {}


def _per_data(data: DomainData, key: str, compute: Any) -> Any:
    """A value computed once per loaded DomainData (forgotten with it)."""
    slot = (id(data), key)
    found = _cache.get(slot)
    if found is not None and found[0]() is data:
        return found[1]
    value = compute()
    _cache[slot] = (weakref.ref(data, lambda _: _cache.pop(slot, None)), value)
    return value


def task_hash(task: Task) -> str:
    """sha256 of a task's whole content (its id included): the cache key of its audit."""
    return hashlib.sha256(canonical_json(unstructure(task)).encode()).hexdigest()


def content_without_id(task: Task) -> str:
    """sha256 of a task's content apart from its id: equal for duplicates."""
    data = unstructure(task)
    data.pop("id", None)
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


def data_fingerprint(data: DomainData) -> str:
    """sha256 of what decides a domain's audits besides the tasks: its name, policy and pristine states."""

    def compute() -> str:
        states = {"agent": data.agent_state.content_hash(), "user": data.user_state.content_hash() if data.user_state is not None else None}
        payload = {"domain": data.name, "policy": data.policy, "states": states, "retrieval": data.retrieval}
        return hashlib.sha256(canonical_json(payload).encode()).hexdigest()

    return str(_per_data(data, "fingerprint", compute))


@attrs.frozen(kw_only=True)
class GoldTrace:
    """One replay of a task's gold actions from a fresh state: each action's result text and the final hashes."""

    results: list[tuple[str, str]]
    """(action name, result text) in order."""
    errors: list[str]
    hashes: tuple[str, str | None]


def trace_gold(data: DomainData, task: Task) -> GoldTrace:
    """Replay the gold actions as the run's gold replay does (its sync rule), keeping every result."""
    env = build_environment(data, task)
    results, errors = [], []
    for action in task.gold_actions():
        message = env.execute(action.as_tool_call(), sync=data.sync_gold_actions)
        results.append((action.name, message.content or ""))
        if message.error:
            errors.append(f"{action.action_id} {action.name}: {message.content}")
    return GoldTrace(results=results, errors=errors, hashes=env.hashes())


def static_flags(task: Task, data: DomainData, trace: GoldTrace | None = None) -> dict[str, str]:
    """The task's static flags, flag -> evidence (`trace`: its gold replay, replayed here when not given).

    Without a trace they are computed once per task and loaded data: a run's report and its attribution both ask.
    """
    if trace is None:
        return dict(_per_data(data, f"static_flags:{task.id}", lambda: _static_flags(task, data, None)))
    return _static_flags(task, data, trace)


def _static_flags(task: Task, data: DomainData, trace: GoldTrace | None) -> dict[str, str]:
    found: dict[str, str] = {}
    criteria = task.evaluation_criteria
    for flag, evidence in (
        ("actions_unscored", _actions_unscored(task)),
        ("empty_criteria", _empty_criteria(criteria)),
        ("nl_outside_basis", _nl_outside_basis(criteria)),
        ("unknown_ids", _unknown_ids(task, data, trace)),
        ("duplicate", _duplicate(task, data)),
    ):
        if evidence:
            found[flag] = evidence
    return found


def _basis(criteria: EvaluationCriteria | None) -> list[str]:
    return list(criteria.reward_basis) if criteria is not None else []


def _actions_unscored(task: Task) -> str | None:
    actions = task.gold_actions()
    basis = _basis(task.evaluation_criteria)
    if not actions or RewardType.ACTION.value in basis:
        return None
    evidence = f"{len(actions)} gold action(s) ({_listed([a.name for a in actions])}) while the basis is {'+'.join(basis) or 'empty'}"
    if RewardType.DB.value in basis:  # the writes still count through the state they leave; the reads not at all
        evidence += ": DB checks the state the writes leave, not the calls (a read the task needs is never checked)"
    return evidence


def _nothing_to_check(criteria: EvaluationCriteria) -> dict[str, bool]:
    """For each built-in component, True when the task gives it nothing to check (it then passes by itself)."""
    return {
        RewardType.DB.value: criteria.actions is None and criteria.env_assertions is None,  # the DB check's own rule
        RewardType.ENV_ASSERTION.value: not criteria.env_assertions,
        RewardType.ACTION.value: not criteria.actions,
        RewardType.COMMUNICATE.value: not criteria.communicate_info,
        RewardType.NL_ASSERTION.value: not criteria.nl_assertions,
    }


def _empty_parts(criteria: EvaluationCriteria) -> list[str]:
    empty = _nothing_to_check(criteria)
    return [name for name in criteria.reward_basis if empty.get(name, False)]


def _empty_criteria(criteria: EvaluationCriteria | None) -> str | None:
    if criteria is None:
        return "no evaluation criteria: every conversation scores 1"
    if not criteria.reward_basis:
        return "empty reward basis: every conversation that ends by a stop scores 1"
    if len(_empty_parts(criteria)) == len(criteria.reward_basis):
        return f"basis {'+'.join(criteria.reward_basis)} has nothing to check: every conversation that ends by a stop scores 1"
    return None


def _nl_outside_basis(criteria: EvaluationCriteria | None) -> str | None:
    if criteria is None:
        return None
    problems = []
    if criteria.nl_assertions and RewardType.NL_ASSERTION.value not in criteria.reward_basis:
        problems.append(f"{len(criteria.nl_assertions)} NL assertion(s) not in the basis {'+'.join(criteria.reward_basis)}")
    problems += [f"{name} in the basis has nothing to check" for name in _empty_parts(criteria)]
    return "; ".join(problems) or None


def id_values(arguments: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(key, value) of every id-like argument (keys named id, ids, *_id, *_ids), lists unpacked."""
    for key, value in arguments.items():
        if not ID_KEY.search(key):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str | int) and not isinstance(item, bool):
                yield key, str(item)


def _walk(value: Any, into: set[str]) -> None:
    # A loop with the plain kinds settled inline: a run's end walks every record of its database (~165k values).
    add, stack = into.add, [value]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str:
            add(value)
        elif kind is dict or isinstance(value, dict):
            for key, item in value.items():
                add(key if type(key) is str else str(key))
                if type(item) is str:
                    add(item)
                elif item is not None:
                    stack.append(item)
        elif kind is list or isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, str | int) and not isinstance(value, bool):
            add(str(value))


def db_values(data: DomainData) -> frozenset[str]:
    """Every key and scalar value of the domain's pristine agent and user states, as text (once per data, kept on disk)."""
    # Kept by the states' content: walking a large database (tau2's airline) was most of every run's end.
    return frozenset(_per_data(data, "db_values", lambda: _kept_db_values(data)))


def _kept_db_values(data: DomainData) -> frozenset[str]:
    states = [state for state in (data.agent_state, data.user_state) if state is not None]

    def walk() -> str:
        found: set[str] = set()
        for state in states:
            _walk(state.to_dict(), found)
        return json.dumps(sorted(found))

    key = hashlib.sha256(canonical_json([DB_VALUES_VERSION, [state.content_hash() for state in states]]).encode()).hexdigest()
    return cached_text("audit", f"db-values-{key}.json", walk, _texts)


def _texts(text: str) -> frozenset[str]:
    found = json.loads(text)
    if not isinstance(found, list) or not all(type(value) is str for value in found):
        raise ValueError("not a list of texts")
    return frozenset(found)


def _unknown_ids(task: Task, data: DomainData, trace: GoldTrace | None) -> str | None:
    criteria = task.evaluation_criteria
    actions = task.gold_actions()
    assertions = (criteria.env_assertions or []) if criteria else []
    if not any(True for a in actions for _ in id_values(a.arguments)) and not any(True for a in assertions for _ in id_values(a.arguments)):
        return None
    known: AbstractSet[str] = db_values(data)
    if task.initial_state is not None:  # what the task's set-up writes is in its initial DB too
        known = set(known)
        _walk(unstructure(task.initial_state), known)
        env = build_environment(data, task)
        for toolkit in (env.agent_tools, env.user_tools):
            for table in toolkit.state.tables.values() if toolkit is not None else ():
                _walk(unstructure(table.overlay), known)
    outputs = (trace or trace_gold(data, task)).results
    missing: list[str] = []
    for position, action in enumerate(actions):
        missing += _missing(action.name, action.arguments, known, [text for _, text in outputs[:position]])
    for assertion in assertions:
        missing += _missing(assertion.func_name, assertion.arguments, known, [text for _, text in outputs])
    return f"not in the initial DB nor an earlier gold output: {_listed(list(dict.fromkeys(missing)))}" if missing else None


def _missing(name: str, arguments: dict[str, Any], known: AbstractSet[str], outputs: Sequence[str]) -> list[str]:
    return [f"{name}.{key}={value}" for key, value in id_values(arguments) if value not in known and not any(value in text for text in outputs)]


def _duplicate(task: Task, data: DomainData) -> str | None:
    def compute() -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for other in data.tasks:
            groups.setdefault(content_without_id(other), []).append(other.id)
        return groups

    same = [i for i in _per_data(data, "duplicates", compute).get(content_without_id(task), []) if i != task.id]
    return f"same content as task {_listed(same)}" if same else None


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_SHOWN])
    return shown + (f" and {len(items) - MAX_SHOWN} more" if len(items) > MAX_SHOWN else "")
