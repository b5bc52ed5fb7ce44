"""ATOD's released dialogue files, loaded unchanged and stored as an imported run scored by the loaded plugins' metrics.

A file is a JSON array of dialogues (`dialogue_id`, `complexity_class`, `metadata`, `goal_list`,
`turns`). Each dialogue becomes one conversation: USER utterances are user messages, SYSTEM ones
agent messages (turn k is message k-1); its task carries the goal list as `goals` and the
complexity class as an attribute; every entry of a turn's `goal_status_changes` becomes a
`goal.status` event on that turn's message. The reward is per-goal credit (GOALS, goal-credit).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    AssistantMessage,
    ConfigError,
    ConversationModels,
    ConversationResult,
    Environment,
    EventLog,
    GoldReplay,
    Message,
    Metric,
    MetricInputs,
    ModelConfig,
    ModelHub,
    PluginSet,
    Registry,
    RewardContext,
    State,
    Store,
    Task,
    TerminationReason,
    Toolkit,
    UserMessage,
    UserScenario,
    canonical_json,
    collect,
    component_values,
    get_plugin_manager,
    read_json,
    score_metrics,
    structure,
    unstructure,
    utc_now,
)

from .goals import GOAL_STATUSES, Goal, GoalStatusChange, goal_problems, task_goals
from .reward import COMPONENT, GoalCreditRule, GoalsComponent

COMPLEXITY = ("medium", "complex")
SPEAKERS = {"USER": UserMessage, "SYSTEM": AssistantMessage}
GOAL_FIELDS = (
    "id",
    "domain",
    "intent",
    "content",
    "core_content",
    "dependencies",
    "slots",
    "slot_values",
    "status",
    "status_history",
    "first_mentioned_turn",
    "completion_turn",
)
REQUIRED_GOAL = ("id", "domain", "intent", "content", "core_content", "status", "dependencies")


@attrs.frozen(kw_only=True)
class ImportedDialogue:
    """One ATOD dialogue as bench stores it."""

    task: Task
    messages: list[Message]
    events: EventLog


@attrs.frozen(kw_only=True)
class ImportSummary:
    """What an import stored."""

    run_id: str
    dialogues: int
    by_class: dict[str, int]
    problems: list[str] = attrs.field(factory=list)
    """Inconsistent goal lists (duplicate ids, unknown dependencies, cycles): imported as they are, named here."""


class _Reader:
    """Reads one file's dialogues, naming the file and the JSON path of anything that does not fit ATOD's schema."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> ConfigError:
        return ConfigError(f"{self.path}: {what} @ {where}")

    def need(self, raw: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
        if not isinstance(raw, dict):
            raise self.fail(where, f"expected an object, got {type(raw).__name__}")
        if key not in raw:
            raise self.fail(where, f"missing required field {key!r}")
        value = raw[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.fail(f"{where}.{key}", f"expected {names}, got {type(value).__name__} {value!r}"[:200])
        return value

    def dialogues(self, document: Any) -> list[ImportedDialogue]:
        if not isinstance(document, list):
            raise self.fail("$", f"an ATOD dialogue file is a JSON array of dialogues, got {type(document).__name__}")
        if not document:
            raise self.fail("$", "the file holds no dialogue")
        read = [self.dialogue(raw, f"$[{i}]") for i, raw in enumerate(document)]
        ids = [d.task.id for d in read]
        twice = next((i for i in ids if ids.count(i) > 1), None)
        if twice is not None:
            raise self.fail(f"$[{ids.index(twice, ids.index(twice) + 1)}].dialogue_id", f"dialogue id {twice!r} appears twice")
        return read

    def dialogue(self, raw: Any, where: str) -> ImportedDialogue:
        dialogue_id = self.need(raw, "dialogue_id", str, where)
        complexity = self.need(raw, "complexity_class", str, where)
        if complexity not in COMPLEXITY:
            raise self.fail(f"{where}.complexity_class", f"must be one of {', '.join(COMPLEXITY)}, got {complexity!r}")
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise self.fail(f"{where}.metadata", f"expected an object, got {type(metadata).__name__}")
        goal_list = self.need(raw, "goal_list", list, where)
        if not goal_list:
            raise self.fail(f"{where}.goal_list", "a dialogue needs at least one goal")
        goals = [self.goal(g, f"{where}.goal_list[{i}]") for i, g in enumerate(goal_list)]
        turns = self.need(raw, "turns", list, where)
        if not turns:
            raise self.fail(f"{where}.turns", "a dialogue needs at least one turn")
        messages, events = self.turns(turns, goals, f"{where}.turns")
        attributes = {
            "complexity": complexity,
            "goals": str(len(goals)),
            **{f"atod_{k}": str(v).lower() for k, v in metadata.items() if isinstance(v, bool)},
        }
        task = Task(
            id=dialogue_id,
            user_scenario=UserScenario(instructions="\n".join(g.content for g in goals)),
            attributes=attributes,
            extensions={"goals": goals},
        )
        return ImportedDialogue(task=task, messages=messages, events=events)

    def goal(self, raw: Any, where: str) -> Goal:
        for key in REQUIRED_GOAL:
            self.need(raw, key, object, where)
        if not isinstance(raw["dependencies"], list):
            raise self.fail(f"{where}.dependencies", "expected a list of goal ids")
        return structure({k: raw[k] for k in GOAL_FIELDS if k in raw and raw[k] is not None}, Goal, source=str(self.path), root=where)

    def turns(self, turns: list[Any], goals: Sequence[Goal], where: str) -> tuple[list[Message], EventLog]:
        messages: list[Message] = []
        events = EventLog()
        status = {g.id: "not_mentioned" for g in goals}
        for i, raw in enumerate(turns):
            at = f"{where}[{i}]"
            speaker = self.need(raw, "speaker", str, at)
            if speaker not in SPEAKERS:
                raise self.fail(f"{at}.speaker", f"must be USER or SYSTEM, got {speaker!r}")
            self.need(raw, "turn_id", int, at)
            utterance = self.need(raw, "utterance", str, at)
            messages.append(SPEAKERS[speaker](content=utterance, turn_idx=i))
            changes = raw.get("goal_status_changes") or []
            if not isinstance(changes, list):
                raise self.fail(f"{at}.goal_status_changes", "expected a list")
            for j, change in enumerate(changes):
                goal_id, new = self.change(change, f"{at}.goal_status_changes[{j}]")
                events.emit(
                    GoalStatusChange(goal_id=goal_id, status=new, previous_status=status.get(goal_id, "not_mentioned")),
                    source="atod-import",
                    message_index=i,
                )
                status[goal_id] = new
        return messages, events

    def change(self, raw: Any, where: str) -> tuple[str, str]:
        goal_id = self.need(raw, "goal_id", str, where)
        new = self.need(raw, "new_status", str, where).lower()
        if new not in GOAL_STATUSES:
            raise self.fail(f"{where}.new_status", f"must be one of {', '.join(GOAL_STATUSES)}, got {raw['new_status']!r}")
        return goal_id, new


def read_dialogues(path: Path) -> list[ImportedDialogue]:
    """Every dialogue of an ATOD file, or a ConfigError naming the file and the JSON path of the first misfit."""
    return _Reader(path).dialogues(read_json(path))


class _NoTools(Toolkit):
    """An imported dialogue has no database: its final state is empty."""


def _empty_environment() -> tuple[Environment, GoldReplay]:
    env = Environment(agent_tools=_NoTools(State(tables={})))
    agent_hash, _ = env.hashes()
    return env, GoldReplay(agent_hash=agent_hash, user_hash=None, action_errors=[], assertion_checks=[])


def import_dialogues(
    path: Path, store_path: Path | str, *, plugins: PluginSet | None = None, models: Mapping[str, ModelConfig] | None = None, cache: bool = False
) -> ImportSummary:
    """Store every dialogue of an ATOD file as a conversation of an imported run and score it with the loaded metrics.

    `models` configures model roles for the metrics (e.g. atod-judge); their calls are ledgered against each conversation.
    """
    dialogues = read_dialogues(path)
    plugins = plugins or get_plugin_manager()
    registry = collect(plugins)
    metrics = [(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()]
    config = {
        "imported_from": str(path),
        "format": "atod-dialogues",
        "tasks_file": str(path),
        "agent": "imported",
        "user": "imported",
        "mode": "default",
        "trials": 1,
        "seed": 0,
        "models": {role: unstructure(c) for role, c in (models or {}).items()},
    }
    config_hash = hashlib.sha256(canonical_json(config).encode()).hexdigest()
    run_id = "atod-" + hashlib.sha256(path.read_bytes() + config_hash.encode()).hexdigest()[:10]
    store = Store(store_path, registry.migrations)
    try:
        loaded = [unstructure(p) for p in plugins.plugins if p.error is None]
        task_sets = {"atod": hashlib.sha256(canonical_json([unstructure(d.task) for d in dialogues]).encode()).hexdigest()}
        store.begin_run(run_id, config, config_hash, loaded, task_sets, 0)
        done = store.finished_units(run_id)
        todo = [d for d in dialogues if ("agent", d.task.id, 0) not in done]
        asyncio.run(_store_all(store, run_id, todo, metrics, _hub(registry, store, models, cache)))
        store.set_status(run_id, "complete")
    finally:
        store.close()
    by_class: dict[str, int] = {}
    for d in dialogues:
        by_class[d.task.attributes["complexity"]] = by_class.get(d.task.attributes["complexity"], 0) + 1
    problems = [f"{d.task.id}: {p}" for d in dialogues for p in goal_problems(task_goals(d.task))]
    return ImportSummary(run_id=run_id, dialogues=len(dialogues), by_class=by_class, problems=problems)


def _hub(registry: Registry, store: Store, models: Mapping[str, ModelConfig] | None, cache: bool) -> ModelHub | None:
    if not models:
        return None
    return ModelHub(configs=dict(models), backends=registry.components.get("model", {}), store=store, use_cache=cache)


async def _store_all(
    store: Store, run_id: str, dialogues: Sequence[ImportedDialogue], metrics: list[tuple[str, Metric]], hub: ModelHub | None
) -> None:
    """Score and store the dialogues on one event loop (model clients live on the loop that made them)."""
    try:
        if hub is not None:
            await hub.check()
        for dialogue in dialogues:
            models = None if hub is None else ConversationModels(hub, run_id=run_id, conversation_id=f"{run_id}/agent/{dialogue.task.id}/0")
            await _store_dialogue(store, run_id, dialogue, metrics, models)
    finally:
        if hub is not None:
            await hub.aclose()


async def _store_dialogue(
    store: Store, run_id: str, dialogue: ImportedDialogue, metrics: list[tuple[str, Metric]], models: ConversationModels | None
) -> None:
    env, gold = _empty_environment()
    termination = TerminationReason.USER_STOP
    context = RewardContext(task=dialogue.task, messages=dialogue.messages, termination=termination, final_env=env, gold=gold, events=dialogue.events)
    goals = await GoalsComponent().score(context)
    reward_info = GoalCreditRule().combine([COMPONENT], [goals], termination, {})
    now = utc_now()
    result = ConversationResult(
        run_id=run_id,
        arm="agent",
        task_id=dialogue.task.id,
        trial=0,
        seed=0,
        agent="imported",
        user="imported",
        termination_reason=termination,
        messages=dialogue.messages,
        reward_info=reward_info,
        started_utc=now,
        ended_utc=now,
        duration_ms=0,
        events=dialogue.events.events,
        attributes=dict(dialogue.task.attributes),
    )
    values, rows = await score_metrics(metrics, result, MetricInputs(dialogue.task, dialogue.events, env, gold, models))
    store.save_conversation(result, [*component_values(result), *values], plugin_rows=rows)
